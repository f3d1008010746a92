package io.kickplug.virtio.queue;

import io.kickplug.api.memory.GuestMemory;
import java.nio.BufferOverflowException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * A cursor over a list of guest buffers (address, length) that are already validated against guest
 * memory; shared by {@link SplitChainReader} and {@link SplitChainWriter}.
 */
class Segments {
    final GuestMemory memory;
    final long[] addr;
    final int[] len;
    int seg;        // current segment
    long segOff;    // offset inside the current segment
    long position;
    long limit;     // total bytes this cursor may cover from its start

    Segments(GuestMemory memory, long[] addr, int[] len, int from, int to, long startOffset, long limit) {
        this.memory = memory;
        int n = to - from;
        this.addr = new long[n];
        this.len = new int[n];
        System.arraycopy(addr, from, this.addr, 0, n);
        System.arraycopy(len, from, this.len, 0, n);
        this.limit = limit;
        advance(startOffset);
        this.position = 0;
    }

    private Segments(GuestMemory memory, long[] addr, int[] len, int seg, long segOff, long limit) {
        this.memory = memory;
        this.addr = addr;
        this.len = len;
        this.seg = seg;
        this.segOff = segOff;
        this.limit = limit;
    }

    long remaining() {
        return limit - position;
    }

    private long segLen(int i) {
        return len[i] & 0xffffffffL;
    }

    /** Moves the underlying segment pointer by n bytes without touching position bookkeeping. */
    private void advance(long n) {
        while (n > 0 && seg < addr.length) {
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
        while (seg < addr.length && segOff == segLen(seg)) {
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
        need(n, false);
        int done = 0;
        while (done < n) {
            skipEmpty();
            int k = (int) Math.min(n - done, segLen(seg) - segOff);
            memory.read(addr[seg] + segOff, dst, off + done, k);
            done += k;
            segOff += k;
        }
        position += n;
        skipEmpty();
    }

    void write(byte[] src, int off, int n) {
        need(n, true);
        int done = 0;
        while (done < n) {
            skipEmpty();
            int k = (int) Math.min(n - done, segLen(seg) - segOff);
            memory.write(addr[seg] + segOff, src, off + done, k);
            done += k;
            segOff += k;
        }
        position += n;
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

    ByteBuffer[] views(long n, boolean writer) {
        need(n, writer);
        List<ByteBuffer> out = new ArrayList<>(2);
        long done = 0;
        while (done < n) {
            skipEmpty();
            long k = Math.min(n - done, segLen(seg) - segOff);
            for (ByteBuffer b : memory.views(addr[seg] + segOff, k)) {
                out.add(b);
            }
            done += k;
            segOff += k;
        }
        position += n;
        skipEmpty();
        return out.toArray(new ByteBuffer[0]);
    }

    /** The cursor for bytes {@code [offset, remaining)} from here; this one keeps {@code [0, offset)}. */
    Segments splitAt(long offset, boolean writer) {
        if (offset < 0 || offset > remaining()) {
            throw writer ? new BufferOverflowException() : new BufferUnderflowException();
        }
        long tailLen = remaining() - offset;
        // Find the segment position at offset from the current point.
        int s = seg;
        long so = segOff;
        long n = offset;
        while (n > 0 && s < addr.length) {
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
        Segments tail = new Segments(memory, addr, len, s, so, tailLen);
        tail.skipEmpty();
        this.limit = position + offset;
        return tail;
    }
}
