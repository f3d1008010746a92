package io.kickplug.export.nbd;

import java.io.EOFException;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/**
 * The server side of the fixed newstyle negotiation (proto.md "Fixed newstyle negotiation", "Option types"): the
 * greeting, the client flags, then options until NBD_OPT_GO or NBD_OPT_EXPORT_NAME picks an export, NBD_OPT_ABORT
 * ends it, or the client breaks a rule. TLS is not offered (NOTLS mode): NBD_OPT_STARTTLS gets NBD_REP_ERR_POLICY.
 * Every length the client sends is bounded before anything is read into memory.
 */
final class Negotiation {

    private static final Logger LOG = System.getLogger(Negotiation.class.getName());

    /**
     * The most option data read into memory. The largest option understood here is NBD_OPT_GO: a name of at most
     * {@value Nbd#MAX_STRING} bytes and a list of information requests; more is taken as a denial of service ("Termination
     * of the session during option haggling": the server "MAY initiate a hard disconnect").
     */
    static final int MAX_OPTION_DATA = 64 * 1024;
    /** The most options one connection may send before it is dropped (a client looping on NBD_OPT_LIST). */
    static final int MAX_OPTIONS = 1024;

    /** What the negotiation ended with: the export for transmission, and whether replies are structured. */
    record Session(NbdExport export, boolean structured, int transmissionFlags) {
    }

    private final ByteChannel channel;
    private final Exports exports;
    private final boolean multiConn;
    private final String peer;
    private boolean structured;
    private boolean noZeroes;

    Negotiation(ByteChannel channel, Exports exports, boolean multiConn, String peer) {
        this.channel = channel;
        this.exports = exports;
        this.multiConn = multiConn;
        this.peer = peer;
    }

    /** Runs the negotiation: the session to transmit with, or null when the connection is to be closed. */
    Session run() throws IOException {
        ByteBuffer hello = ByteBuffer.allocate(18);
        hello.putLong(Nbd.NBDMAGIC).putLong(Nbd.IHAVEOPT).putShort((short) (Nbd.FLAG_FIXED_NEWSTYLE | Nbd.FLAG_NO_ZEROES))
                .flip();
        write(hello);
        int clientFlags = read(4).getInt();
        // "Client flags": "the server MUST drop the TCP connection if the client sets an unknown flag". A client
        // without NBD_FLAG_C_FIXED_NEWSTYLE is honoured anyway (the server MAY).
        if ((clientFlags & ~(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES)) != 0) {
            LOG.log(Level.DEBUG, () -> peer + ": unknown client flags 0x" + Integer.toHexString(clientFlags));
            return null;
        }
        noZeroes = (clientFlags & Nbd.FLAG_C_NO_ZEROES) != 0;
        for (int n = 0; n < MAX_OPTIONS; n++) {
            ByteBuffer h = read(16);
            long magic = h.getLong();
            int option = h.getInt();
            long length = Integer.toUnsignedLong(h.getInt());
            // "Newstyle negotiation": every option starts with IHAVEOPT; without it the stream is out of step.
            if (magic != Nbd.IHAVEOPT) {
                LOG.log(Level.DEBUG, () -> peer + ": bad option magic 0x" + Long.toHexString(magic));
                return null;
            }
            if (length > MAX_OPTION_DATA) {
                LOG.log(Level.DEBUG, () -> peer + ": option " + option + " with " + length + " bytes of data");
                return null;
            }
            Session s = option(option, (int) length);
            if (s != null) {
                return s;
            }
            if (ended) {
                return null;
            }
        }
        LOG.log(Level.DEBUG, () -> peer + ": more than " + MAX_OPTIONS + " options");
        return null;
    }

    /** Set when the option ended the negotiation without a session (NBD_OPT_ABORT, an unknown export name). */
    private boolean ended;

    private Session option(int option, int length) throws IOException {
        switch (option) {
            case Nbd.OPT_EXPORT_NAME -> {
                String name = string(read(length), length);
                NbdExport e = name == null ? null : exports.get(name);
                if (e == null || e.closed()) {
                    // NBD_OPT_EXPORT_NAME: "If the chosen export does not exist ... the server MUST terminate the
                    // session" (it cannot send an error).
                    ended = true;
                    return null;
                }
                int flags = e.transmissionFlags(multiConn);
                // "Newstyle negotiation": size, transmission flags, then 124 zeroes unless NBD_FLAG_C_NO_ZEROES.
                ByteBuffer b = ByteBuffer.allocate(10 + (noZeroes ? 0 : 124));
                b.putLong(e.port().size()).putShort((short) flags).position(b.limit()).flip();
                write(b);
                return new Session(e, structured, flags);
            }
            case Nbd.OPT_ABORT -> {
                skip(length); // "a server SHOULD ignore any data sent by the client"
                reply(option, Nbd.REP_ACK, null);
                ended = true;
                return null;
            }
            case Nbd.OPT_LIST -> {
                if (length != 0) {
                    // NBD_OPT_LIST: "the server SHOULD reject a request that includes data with NBD_REP_ERR_INVALID".
                    skip(length);
                    error(option, Nbd.REP_ERR_INVALID, "NBD_OPT_LIST takes no data");
                    return null;
                }
                for (NbdExport e : exports.all()) {
                    if (e.closed()) {
                        continue;
                    }
                    byte[] name = e.name().getBytes(StandardCharsets.UTF_8);
                    byte[] description = ("disk " + e.disk()).getBytes(StandardCharsets.UTF_8);
                    ByteBuffer d = ByteBuffer.allocate(4 + name.length + description.length);
                    d.putInt(name.length).put(name).put(description).flip();
                    reply(option, Nbd.REP_SERVER, d);
                }
                reply(option, Nbd.REP_ACK, null);
                return null;
            }
            case Nbd.OPT_STARTTLS -> {
                // "NOTLS mode": "MUST respond with NBD_REP_ERR_POLICY (if it does not support TLS for policy
                // reasons)". TLS is out of scope for Kickplug's NBD export.
                skip(length);
                error(option, Nbd.REP_ERR_POLICY, "TLS is not supported by this server");
                return null;
            }
            case Nbd.OPT_INFO, Nbd.OPT_GO -> {
                return infoOrGo(option, read(length));
            }
            case Nbd.OPT_STRUCTURED_REPLY -> {
                if (length != 0) {
                    // NBD_OPT_STRUCTURED_REPLY: "the server SHOULD reject a request that includes data with
                    // NBD_REP_ERR_INVALID".
                    skip(length);
                    error(option, Nbd.REP_ERR_INVALID, "NBD_OPT_STRUCTURED_REPLY takes no data");
                    return null;
                }
                structured = true;
                reply(option, Nbd.REP_ACK, null);
                return null;
            }
            default -> {
                // "Fixed newstyle negotiation": any other option is answered NBD_REP_ERR_UNSUP ("the option length
                // ... allow[s] the server to skip any options ... it does not understand").
                skip(length);
                error(option, Nbd.REP_ERR_UNSUP, "option " + option + " is not supported");
                return null;
            }
        }
    }

    /** NBD_OPT_INFO and NBD_OPT_GO ("Option types"): the session for GO's ACK, null otherwise. */
    private Session infoOrGo(int option, ByteBuffer data) throws IOException {
        // Data: 32-bit name length, MUST be no larger than the option data length - 6; the name; a 16-bit count of
        // information requests; that many 16-bit requests.
        if (data.remaining() < 6) {
            error(option, Nbd.REP_ERR_INVALID, "option data of " + data.remaining() + " bytes is too short");
            return null;
        }
        long nameLength = Integer.toUnsignedLong(data.getInt());
        if (nameLength > data.remaining() - 2) {
            error(option, Nbd.REP_ERR_INVALID, "name length " + nameLength + " exceeds the option data");
            return null;
        }
        String name = string(data, (int) nameLength);
        if (name == null) {
            error(option, Nbd.REP_ERR_INVALID, "the export name is not a valid string");
            return null;
        }
        int requests = Short.toUnsignedInt(data.getShort());
        if (data.remaining() != 2 * requests) {
            error(option, Nbd.REP_ERR_INVALID, requests + " information requests in " + data.remaining() + " bytes");
            return null;
        }
        boolean wantName = false;
        for (int i = 0; i < requests; i++) {
            // "The server MUST ignore any information requests it does not understand."
            if (Short.toUnsignedInt(data.getShort()) == Nbd.INFO_NAME) {
                wantName = true;
            }
        }
        NbdExport e = exports.get(name);
        if (e == null || e.closed()) {
            error(option, Nbd.REP_ERR_UNKNOWN, "no export named '" + name + "'");
            return null;
        }
        int flags = e.transmissionFlags(multiConn);
        // NBD_INFO_EXPORT: "length MUST be 12": type, 64-bit size, 16-bit transmission flags.
        ByteBuffer export = ByteBuffer.allocate(12);
        export.putShort((short) Nbd.INFO_EXPORT).putLong(e.port().size()).putShort((short) flags).flip();
        reply(option, Nbd.REP_INFO, export);
        // NBD_INFO_BLOCK_SIZE, sent whether asked for or not (the server "MAY send information ... not explicitly
        // requested"): min 512 (the disk's logical block), preferred 4096, max payload 32 MiB ("Size constraints").
        ByteBuffer sizes = ByteBuffer.allocate(14);
        sizes.putShort((short) Nbd.INFO_BLOCK_SIZE).putInt(Math.max(Nbd.MIN_BLOCK, e.port().logicalBlockSize()))
                .putInt(Nbd.PREFERRED_BLOCK).putInt(Nbd.MAX_PAYLOAD).flip();
        reply(option, Nbd.REP_INFO, sizes);
        if (wantName) {
            byte[] n = e.name().getBytes(StandardCharsets.UTF_8);
            ByteBuffer b = ByteBuffer.allocate(2 + n.length);
            b.putShort((short) Nbd.INFO_NAME).put(n).flip();
            reply(option, Nbd.REP_INFO, b);
        }
        reply(option, Nbd.REP_ACK, null);
        // NBD_OPT_GO: after the ACK "transmission mode is entered immediately" (no zero padding).
        return option == Nbd.OPT_GO ? new Session(e, structured, flags) : null;
    }

    /** A string of {@code length} bytes of {@code data}: valid UTF-8, no NUL, at most 4096 bytes ("Conventions"). */
    private static String string(ByteBuffer data, int length) {
        if (length > Nbd.MAX_STRING) {
            return null;
        }
        ByteBuffer slice = data.slice();
        slice.limit(length);
        data.position(data.position() + length);
        String s;
        try {
            s = StandardCharsets.UTF_8.newDecoder().onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT).decode(slice).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
        return s.indexOf('\0') >= 0 ? null : s;
    }

    /** An option reply ("Fixed newstyle negotiation"): magic, option, type, length, data. */
    private void reply(int option, int type, ByteBuffer data) throws IOException {
        int length = data == null ? 0 : data.remaining();
        ByteBuffer b = ByteBuffer.allocate(20 + length);
        b.putLong(Nbd.OPTION_REPLY_MAGIC).putInt(option).putInt(type).putInt(length);
        if (data != null) {
            b.put(data);
        }
        write(b.flip());
    }

    /** An error reply with a message "suitable for display to the user" ("Option reply types"). */
    private void error(int option, int type, String message) throws IOException {
        LOG.log(Level.DEBUG, () -> peer + ": option " + option + " refused: " + message);
        reply(option, type, ByteBuffer.wrap(message.getBytes(StandardCharsets.UTF_8)));
    }

    private ByteBuffer read(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n); // n is bounded by MAX_OPTION_DATA or a fixed header size
        while (b.hasRemaining()) {
            if (channel.read(b) < 0) {
                throw new EOFException(peer + " closed the connection during the handshake");
            }
        }
        return b.flip();
    }

    /** Reads and drops {@code n} bytes through a small buffer. */
    private void skip(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(Math.min(n, 4096));
        int left = n;
        while (left > 0) {
            b.clear().limit(Math.min(left, b.capacity()));
            int got = channel.read(b);
            if (got < 0) {
                throw new EOFException(peer + " closed the connection during the handshake");
            }
            left -= got;
        }
    }

    private void write(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            channel.write(b);
        }
    }
}
