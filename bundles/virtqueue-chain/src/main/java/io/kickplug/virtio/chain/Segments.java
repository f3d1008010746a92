package io.kickplug.virtio.chain;

import io.kickplug.api.memory.BufferViews;
import io.kickplug.api.memory.GuestMemory;
import java.nio.BufferOverflowException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;

/**
 * A cursor over a run of guest buffers (address, length) that are already validated against guest memory;
 * shared by {@link PooledChainReader} and {@link PooledChainWriter}. It covers segments {@code [seg, end)} of its
 * chain's arrays, which it shares with the chain (no copy): the chain rewrites them only when its head is
 * popped again, which the queue allows only after the head was pushed (section 2.7.13), so never while a
 * request that owns this cursor is in flight. A cursor is re-initialised, not reallocated, for the next chain.
 */
final class Segments {
    final GuestMemory memory;
    private long[] addr;
    private int[] len;
    /** Segment index after the last one this cursor covers. */
    private int end;
    int seg;        // current segment
    long segOff;    // offset inside the current segment
    long position;
    long limit;     // total bytes this cursor may cover from its start
    /** Views handed out by {@link #views}; made on first use, then reused. */
    private BufferViews views;
    /** For values that straddle two segments; made on first use. */
    private byte[] scratch;

    Segments(GuestMemory memory) {
        this.memory = memory;
    }

    /** Covers segments {@code [from, to)} of the arrays, {@code limit} bytes, from their start. */
    Segments init(long[] addr, int[] len, int from, int to, long limit) {
        return initAt(addr, len, to, from, 0, limit);
    }

    private Segments initAt(long[] addr, int[] len, int end, int seg, long segOff, long limit) {
        this.addr = addr;
        this.len = len;
        this.end = end;
        this.seg = seg;
        this.segOff = segOff;
        this.position = 0;
        this.limit = limit;
        skipEmpty();
        return this;
    }

    long remaining() {
        return limit - position;
    }

    private long segLen(int i) {
        return len[i] & 0xffffffffL;
    }

    /** Moves the underlying segment pointer by n bytes without touching position bookkeeping. */
    private void advance(long n) {
        while (n > 0 && seg < end) {
            long left = segLen(seg) - segOff;
            if (n < left) {
                segOff += n;
                return;
            }
            n -= left;
            seg++;
            segOff = 0;
        }
        skipEmpty();
    }

    private void skipEmpty() {
        while (seg < end && segOff == segLen(seg)) {
            seg++;
            segOff = 0;
        }
    }

    void skip(long n, boolean writer) {
        need(n, writer);
        advance(n);
        position += n;
    }

    void need(long n, boolean writer) {
        if (n < 0 || n > remaining()) {
            throw writer ? new BufferOverflowException() : new BufferUnderflowException();
        }
    }

    /** Copies out of guest memory. */
    void read(byte[] dst, int off, int n) {
        copy(dst, off, n, false);
    }

    /** A little-endian 32-bit value, read in place when it lies in one segment. */
    int readU32() {
        need(4, false);
        if (segLen(seg) - segOff >= 4) {
            int v = memory.readU32(addr[seg] + segOff); // guest memory is little-endian
            advance(4);
            position += 4;
            return v;
        }
        byte[] b = scratch();
        read(b, 0, 4);
        return (b[0] & 0xff) | (b[1] & 0xff) << 8 | (b[2] & 0xff) << 16 | (b[3] & 0xff) << 24;
    }

    /** A little-endian 64-bit value, read in place when it lies in one segment. */
    long readU64() {
        need(8, false);
        if (segLen(seg) - segOff >= 8) {
            long v = memory.readU64(addr[seg] + segOff);
            advance(8);
            position += 8;
            return v;
        }
        byte[] b = scratch();
        read(b, 0, 8);
        long v = 0;
        for (int i = 7; i >= 0; i--) {
            v = (v << 8) | (b[i] & 0xff);
        }
        return v;
    }

    private byte[] scratch() {
        if (scratch == null) {
            scratch = new byte[8];
        }
        return scratch;
    }

    /** Copies into guest memory. */
    void write(byte[] src, int off, int n) {
        copy(src, off, n, true);
    }

    /** Copies {@code n} bytes between {@code bytes} and the segments: into guest memory for a writer. */
    private void copy(byte[] bytes, int off, int n, boolean writer) {
        need(n, writer);
        int done = 0;
        while (done < n) {
            skipEmpty();
            int k = (int) Math.min(n - done, segLen(seg) - segOff);
            if (writer) {
                memory.write(addr[seg] + segOff, bytes, off + done, k);
            } else {
                memory.read(addr[seg] + segOff, bytes, off + done, k);
            }
            done += k;
            segOff += k;
        }
        position += n;
        skipEmpty();
    }

    /** One byte, stored in place (the status byte of a request: no temporary array). */
    void writeU8(int value) {
        need(1, true);
        memory.writeU8(addr[seg] + segOff, (byte) value); // skipEmpty() left seg on a non-empty segment
        segOff++;
        position++;
        skipEmpty();
    }

    void fill(long n, byte value) {
        need(n, true);
        long done = 0;
        while (done < n) {
            skipEmpty();
            long k = Math.min(n - done, segLen(seg) - segOff);
            memory.fill(addr[seg] + segOff, k, value);
            done += k;
            segOff += k;
        }
        position += n;
        skipEmpty();
    }

    /**
     * The next {@code n} bytes as views into guest memory. The array and its buffers belong to this cursor:
     * they are reused by its next call (and by the next chain that reuses the cursor).
     */
    ByteBuffer[] views(long n, boolean writer) {
        need(n, writer);
        BufferViews out = views;
        if (out == null) {
            out = new BufferViews();
            views = out;
        }
        out.clear();
        long done = 0;
        while (done < n) {
            skipEmpty();
            long k = Math.min(n - done, segLen(seg) - segOff);
            memory.viewsInto(addr[seg] + segOff, k, out);
            done += k;
            segOff += k;
        }
        position += n;
        skipEmpty();
        return out.toArray();
    }

    /**
     * Makes {@code tail} the cursor for bytes {@code [offset, remaining)} from here; this one keeps
     * {@code [0, offset)}.
     */
    Segments splitAt(long offset, boolean writer, Segments tail) {
        if (offset < 0 || offset > remaining()) {
            throw writer ? new BufferOverflowException() : new BufferUnderflowException();
        }
        long tailLen = remaining() - offset;
        // Find the segment position at offset from the current point.
        int s = seg;
        long so = segOff;
        long n = offset;
        while (n > 0 && s < end) {
            long left = segLen(s) - so;
            if (n < left) {
                so += n;
                n = 0;
                break;
            }
            n -= left;
            s++;
            so = 0;
        }
        tail.initAt(addr, len, end, s, so, tailLen);
        this.limit = position + offset;
        return tail;
    }
}
