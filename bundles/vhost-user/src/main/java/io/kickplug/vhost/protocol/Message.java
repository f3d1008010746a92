package io.kickplug.vhost.protocol;

import java.io.FileDescriptor;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * One vhost-user message: header fields, payload and the file descriptors that came with it
 * (SCM_RIGHTS). The receiver owns the descriptors and must use or close each of them.
 */
public record Message(int request, int flags, byte[] payload, FileDescriptor[] fds) {

    public Message {
        payload = payload == null ? new byte[0] : payload;
        fds = fds == null ? new FileDescriptor[0] : fds;
    }

    public int size() {
        return payload.length;
    }

    public boolean needReply() {
        return (flags & VhostUser.FLAG_NEED_REPLY) != 0;
    }

    /** The payload as a little-endian buffer (a fresh view each call). */
    public ByteBuffer body() {
        return ByteBuffer.wrap(payload).order(ByteOrder.LITTLE_ENDIAN);
    }

    public String name() {
        return VhostUser.name(request);
    }

    /** A little-endian buffer for building payloads. */
    public static ByteBuffer payload(int size) {
        return ByteBuffer.allocate(size).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** A u64 payload. */
    public static byte[] u64(long value) {
        return payload(8).putLong(value).array();
    }

    /** A vring state payload: u32 index, u32 num. */
    public static byte[] vringState(int index, int num) {
        return payload(8).putInt(index).putInt(num).array();
    }
}
