package io.kickplug.export.nbd;

import java.nio.ByteBuffer;

/**
 * One request header as the client sent it (proto.md "Request message": 32-bit magic, 16-bit command flags, 16-bit
 * type, 64-bit cookie, 64-bit offset, 32-bit length), before any check: {@link #offset} and {@link #length} are
 * unsigned on the wire and kept so ({@link Long#compareUnsigned}, {@link Integer#toUnsignedLong}).
 */
record Request(int magic, int flags, int type, long cookie, long offset, int length) {

    /** Reads the {@value Nbd#REQUEST_BYTES} bytes of a header at {@code in}'s position, advancing it. */
    static Request read(ByteBuffer in) {
        int magic = in.getInt();
        int flags = Short.toUnsignedInt(in.getShort());
        int type = Short.toUnsignedInt(in.getShort());
        long cookie = in.getLong();
        long offset = in.getLong();
        int length = in.getInt();
        return new Request(magic, flags, type, cookie, offset, length);
    }

    /** The length as a non-negative long (it is unsigned on the wire). */
    long lengthBytes() {
        return Integer.toUnsignedLong(length);
    }

    /** Whether the client sends {@link #length} bytes of data after this header: only NBD_CMD_WRITE does. */
    boolean carriesPayload() {
        return type == Nbd.CMD_WRITE;
    }

    @Override
    public String toString() {
        return Nbd.command(type) + " flags 0x" + Integer.toHexString(flags) + " offset "
                + Long.toUnsignedString(offset) + " length " + Integer.toUnsignedString(length);
    }
}
