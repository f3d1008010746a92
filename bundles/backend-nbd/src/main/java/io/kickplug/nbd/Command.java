package io.kickplug.nbd;

import io.kickplug.api.blk.BackendIo;
import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * One NBD command in flight for one {@link BackendIo}; pooled by the backend. Between its registration on a
 * connection and its completion only that connection's reader thread changes the reply state.
 */
final class Command {

    BackendIo io;
    int type;
    int flags;
    long offset;
    /** Payload bytes (READ, WRITE) or the range (TRIM, WRITE_ZEROES); 0 for FLUSH. */
    int length;
    /** Times it reached a server whose connection then failed. */
    int attempts;
    /** The connection's batch it was last registered in ({@code NbdBackend}'s writer numbers them). */
    long batch;
    /** The cookie (handle) of its current send; 0 while not sent. */
    long cookie;
    long sentNanos;
    /** READ: data bytes the reply chunks covered so far. */
    long received;
    /** The first error a reply reported. */
    IOException error;

    void reset(BackendIo io, int type, int flags, long offset, int length) {
        this.io = io;
        this.type = type;
        this.flags = flags;
        this.offset = offset;
        this.length = length;
        this.attempts = 0;
        this.batch = 0;
        this.cookie = 0;
        this.received = 0;
        this.error = null;
    }

    /** Copies {@code src}'s remaining bytes into the READ's buffers at byte {@code at} of the command, absolute. */
    void copyIn(long at, ByteBuffer src) {
        transfer(at, src.remaining(), src, true);
    }

    /** Zeroes {@code n} bytes of the READ's buffers at byte {@code at} of the command (a hole). */
    void zero(long at, long n, ByteBuffer zeroes) {
        long done = 0;
        while (done < n) {
            int chunk = (int) Math.min(zeroes.capacity(), n - done);
            copyIn(at + done, zeroes.duplicate().position(0).limit(chunk));
            done += chunk;
        }
    }

    /** Copies {@code n} bytes of the WRITE's buffers from byte {@code at} into {@code dst} (at its position). */
    void copyOut(long at, int n, ByteBuffer dst) {
        transfer(at, n, dst, false);
    }

    /**
     * Moves {@code n} bytes between the operation's buffers, from byte {@code at} of the command, and {@code other}
     * at its position (advanced): into the buffers when {@code intoBuffers}, out of them otherwise. The buffers'
     * own positions are left alone (absolute puts).
     */
    private void transfer(long at, int n, ByteBuffer other, boolean intoBuffers) {
        ByteBuffer[] buffers = io.buffers();
        long skip = at;
        int i = 0;
        while (i < buffers.length && skip >= buffers[i].remaining()) {
            skip -= buffers[i].remaining();
            i++;
        }
        int left = n;
        while (left > 0 && i < buffers.length) {
            ByteBuffer b = buffers[i];
            int m = Math.min(b.remaining() - (int) skip, left);
            int index = b.position() + (int) skip;
            if (intoBuffers) {
                b.put(index, other, other.position(), m);
            } else {
                other.put(other.position(), b, index, m);
            }
            other.position(other.position() + m);
            left -= m;
            skip = 0;
            i++;
        }
    }

    String describe() {
        String name = switch (type) {
            case Nbd.CMD_READ -> "read";
            case Nbd.CMD_WRITE -> "write";
            case Nbd.CMD_FLUSH -> "flush";
            case Nbd.CMD_TRIM -> "trim";
            case Nbd.CMD_WRITE_ZEROES -> "write-zeroes";
            default -> "command " + type;
        };
        return name + " of " + length + " bytes at " + offset;
    }
}
