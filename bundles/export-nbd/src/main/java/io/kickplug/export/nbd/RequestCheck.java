package io.kickplug.export.nbd;

/**
 * Every check of one request header against the export, before anything is read or allocated for it. The result is
 * 0 (go on), an NBD error value to answer with (the stream stays in step: a WRITE's payload is read and dropped), or
 * {@link #CLOSE}: the connection ends, for a header that leaves the stream out of step or a payload too large to take
 * in. Pure: the fuzz test runs it on random headers.
 */
final class RequestCheck {

    /** The connection must be closed (a hard disconnect, proto.md "Terminating the transmission phase"). */
    static final int CLOSE = -1;

    /** What the checks need to know of the export and the connection. */
    record Limits(long size, boolean readOnly, int transmissionFlags, boolean structured) {
    }

    private RequestCheck() {
    }

    /** The flags a command may carry ("Command flags"; FUA is valid for every command once SEND_FUA is set). */
    private static int allowedFlags(int type, int transmissionFlags) {
        int fua = (transmissionFlags & Nbd.FLAG_SEND_FUA) != 0 ? Nbd.CMD_FLAG_FUA : 0;
        return type == Nbd.CMD_WRITE_ZEROES ? fua | Nbd.CMD_FLAG_NO_HOLE : fua;
    }

    static int check(Request r, Limits l) {
        // "Request message": the magic is how the stream is framed; a wrong one means it is out of step.
        if (r.magic() != Nbd.REQUEST_MAGIC) {
            return CLOSE;
        }
        long length = r.lengthBytes();
        int type = r.type();
        if (type == Nbd.CMD_WRITE && length > Nbd.MAX_PAYLOAD) {
            // "Size constraints": the client MUST NOT send more than the maximum payload, and past 2^25 bytes the
            // server MAY deem it a denial of service; the payload cannot be skipped without reading it: close.
            return CLOSE;
        }
        switch (type) {
            case Nbd.CMD_READ, Nbd.CMD_WRITE, Nbd.CMD_FLUSH, Nbd.CMD_TRIM, Nbd.CMD_WRITE_ZEROES, Nbd.CMD_DISC -> {
            }
            // "Error values": "SHOULD return NBD_EINVAL if it receives an unknown command" (CACHE, BLOCK_STATUS
            // are neither advertised nor negotiated here).
            default -> {
                return Nbd.EINVAL;
            }
        }
        if (type == Nbd.CMD_DISC) {
            return 0; // no reply; the connection ends after the requests in flight
        }
        // "Error values": "SHOULD return NBD_EINVAL if it receives an unknown command flag", or one not documented
        // for the command (DF without SEND_DF, FAST_ZERO without SEND_FAST_ZERO, NO_HOLE outside WRITE_ZEROES).
        if ((r.flags() & ~allowedFlags(type, l.transmissionFlags())) != 0) {
            return Nbd.EINVAL;
        }
        boolean writes = type == Nbd.CMD_WRITE || type == Nbd.CMD_TRIM || type == Nbd.CMD_WRITE_ZEROES;
        // "Transmission flags", NBD_FLAG_READ_ONLY: "the server MUST error subsequent write operations"; "Error
        // values": "SHOULD return NBD_EPERM if it receives a write or trim request on a read-only export".
        if (writes && l.readOnly()) {
            return Nbd.EPERM;
        }
        // "Transmission flags": the client MUST NOT use a feature whose flag was not set.
        if (type == Nbd.CMD_TRIM && (l.transmissionFlags() & Nbd.FLAG_SEND_TRIM) == 0
                || type == Nbd.CMD_WRITE_ZEROES && (l.transmissionFlags() & Nbd.FLAG_SEND_WRITE_ZEROES) == 0
                || type == Nbd.CMD_FLUSH && (l.transmissionFlags() & Nbd.FLAG_SEND_FLUSH) == 0) {
            return Nbd.EINVAL;
        }
        if (type == Nbd.CMD_FLUSH) {
            // NBD_CMD_FLUSH: "length and offset are reserved, and MUST be set to all-zero".
            return r.offset() == 0 && length == 0 ? 0 : Nbd.EINVAL;
        }
        if (type == Nbd.CMD_READ && length > Nbd.MAX_PAYLOAD) {
            // NBD_CMD_READ: with simple replies the client MUST NOT ask more than the maximum payload (EINVAL); with
            // structured replies the server "is also permitted to reject large read requests up front with
            // NBD_EOVERFLOW".
            return l.structured() ? Nbd.EOVERFLOW : Nbd.EINVAL;
        }
        // "Size constraints": offset and length MUST be multiples of the minimum block size; "the server SHOULD
        // report an NBD_EINVAL error if the client's request is not aligned".
        if (r.offset() % Nbd.MIN_BLOCK != 0 || length % Nbd.MIN_BLOCK != 0) {
            return Nbd.EINVAL; // offset is unsigned, but a multiple of 512 has the same low bits either way
        }
        // "Size constraints": offset + length MUST NOT exceed the export size. The offset is unsigned: one with its
        // top bit set is past any export. "Error values": ENOSPC for a write (and write zeroes), EINVAL for a read
        // or trim.
        if (r.offset() < 0 || r.offset() > l.size() || length > l.size() - r.offset()) {
            return type == Nbd.CMD_WRITE || type == Nbd.CMD_WRITE_ZEROES ? Nbd.ENOSPC : Nbd.EINVAL;
        }
        return 0;
    }
}
