package io.kickplug.blk.fake;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/** Builds virtio-blk request headers (section 5.2.6): le32 type, le32 reserved, le64 sector. */
public final class Headers {

    private Headers() {
    }

    public static byte[] header(int type, long sector) {
        return ByteBuffer.allocate(16).order(ByteOrder.LITTLE_ENDIAN).putInt(type).putInt(0).putLong(sector).array();
    }

    /** Bytes {@code [from, to)} of {@code bytes}. */
    public static byte[] part(byte[] bytes, int from, int to) {
        return java.util.Arrays.copyOfRange(bytes, from, to);
    }

    /** A buffer of {@code length} bytes, each {@code value}. */
    public static byte[] filled(int length, int value) {
        byte[] b = new byte[length];
        java.util.Arrays.fill(b, (byte) value);
        return b;
    }

    /** Concatenation. */
    public static byte[] concat(byte[]... parts) {
        int n = 0;
        for (byte[] p : parts) {
            n += p.length;
        }
        byte[] all = new byte[n];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, all, at, p.length);
            at += p.length;
        }
        return all;
    }
}
