package io.kickplug.export.nbd;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;

/**
 * The bytes of a reply (proto.md "Simple reply message", "Structured reply chunk message", "Structured reply
 * types"). With structured replies negotiated, a READ always gets a structured reply: its data as one
 * NBD_REPLY_TYPE_OFFSET_DATA chunk marked done (the data was read in full before the chunk is sent, so no error can
 * come after it), a read of length 0 one NBD_REPLY_TYPE_NONE chunk (a content chunk "MUST describe at least one
 * byte"); an error a chunk marked done, NBD_REPLY_TYPE_ERROR_OFFSET at the request's offset for a backend failure of a
 * READ, WRITE, TRIM or WRITE_ZEROES, NBD_REPLY_TYPE_ERROR otherwise, both with a message. Other successful replies are
 * simple ("MAY use either a simple reply or a structured reply to all other requests"). Without structured replies
 * every reply is simple, a READ's with its data only on success.
 */
final class Replies {

    private static final int MAX_MESSAGE = 1024;

    private Replies() {
    }

    /**
     * @param errno 0 or an NBD error value
     * @param message for a structured error, or null
     * @param backendError whether the backend failed (the error is at the request's offset)
     * @param data a READ's buffer holding its data (position 0 after the read), or null
     */
    static ByteBuffer[] of(Request r, boolean structured, int errno, String message, boolean backendError,
            ByteBuffer data) {
        boolean read = r.type() == Nbd.CMD_READ;
        if (!structured) {
            ByteBuffer h = simple(r.cookie(), errno);
            if (read && errno == 0 && data != null) {
                return new ByteBuffer[] {h, data.clear().limit(r.length())};
            }
            return new ByteBuffer[] {h};
        }
        if (errno != 0) {
            boolean atOffset = backendError && r.length() != 0 && (read || r.type() == Nbd.CMD_WRITE
                    || r.type() == Nbd.CMD_TRIM || r.type() == Nbd.CMD_WRITE_ZEROES);
            return new ByteBuffer[] {error(r, errno, message, atOffset)};
        }
        if (!read) {
            return new ByteBuffer[] {simple(r.cookie(), 0)};
        }
        if (r.length() == 0 || data == null) {
            return new ByteBuffer[] {chunkHeader(Nbd.REPLY_TYPE_NONE, r.cookie(), 0).flip()};
        }
        // NBD_REPLY_TYPE_OFFSET_DATA: 64-bit offset, then the data; length = 8 + data.
        ByteBuffer h = chunkHeader(Nbd.REPLY_TYPE_OFFSET_DATA, r.cookie(), 8 + r.length(), 8);
        h.putLong(r.offset()).flip();
        return new ByteBuffer[] {h, data.clear().limit(r.length())};
    }

    static ByteBuffer simple(long cookie, int errno) {
        ByteBuffer h = ByteBuffer.allocate(Nbd.SIMPLE_REPLY_BYTES);
        h.putInt(Nbd.SIMPLE_REPLY_MAGIC).putInt(errno).putLong(cookie).flip();
        return h;
    }

    private static ByteBuffer chunkHeader(int type, long cookie, int length) {
        return chunkHeader(type, cookie, length, 0);
    }

    /** A chunk header marked done, with room for {@code extra} bytes of payload after it. */
    private static ByteBuffer chunkHeader(int type, long cookie, int length, int extra) {
        ByteBuffer h = ByteBuffer.allocate(Nbd.STRUCTURED_REPLY_BYTES + extra);
        h.putInt(Nbd.STRUCTURED_REPLY_MAGIC).putShort((short) Nbd.REPLY_FLAG_DONE).putShort((short) type)
                .putLong(cookie).putInt(length);
        return h;
    }

    /**
     * NBD_REPLY_TYPE_ERROR (32-bit error, 16-bit message length, message) or NBD_REPLY_TYPE_ERROR_OFFSET (the same,
     * then the 64-bit offset, which "MUST lie within the original offset and length of the request").
     */
    private static ByteBuffer error(Request r, int errno, String message, boolean atOffset) {
        byte[] text = message == null ? new byte[0] : message.getBytes(StandardCharsets.UTF_8);
        int n = Math.min(text.length, MAX_MESSAGE); // a string of at most 4096 bytes ("Conventions")
        while (n > 0 && n < text.length && (text[n] & 0xC0) == 0x80) {
            n--; // do not cut a UTF-8 sequence
        }
        int payload = 6 + n + (atOffset ? 8 : 0);
        ByteBuffer h = chunkHeader(atOffset ? Nbd.REPLY_TYPE_ERROR_OFFSET : Nbd.REPLY_TYPE_ERROR, r.cookie(), payload,
                payload);
        h.putInt(errno).putShort((short) n).put(text, 0, n);
        if (atOffset) {
            h.putLong(r.offset());
        }
        return h.flip();
    }
}
