package io.kickplug.virtio.queue;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import io.kickplug.api.virtio.DescriptorChain;
import java.util.Arrays;

/**
 * A validated chain: buffers {@code [0, readable)} are device-readable, the rest device-writable.
 *
 * <p>Pooled: {@link SplitDeviceQueue} keeps one per descriptor head and refills it ({@link #reuse}) each time
 * that head is popped. A head can be popped again only after it was pushed to the used ring (the queue refuses
 * a head in flight, section 2.7.13), so the chain, its cursors and the views they returned are never reused
 * while the request that owns them is in flight. The first {@link #reader()} and {@link #writer()} per pop
 * return the chain's own cursors; later calls make fresh ones, as before.
 */
final class SplitChain implements DescriptorChain {
    private final GuestMemory memory;
    private int head;
    long[] addr = new long[4];
    int[] len = new int[4];
    private int count;
    private int readable;
    private long readableBytes;
    private long writableBytes;
    private final SplitChainReader reader;
    private final SplitChainWriter writer;
    private boolean readerTaken;
    private boolean writerTaken;

    SplitChain(GuestMemory memory) {
        this.memory = memory;
        this.reader = new SplitChainReader(new Segments(memory), true);
        this.writer = new SplitChainWriter(new Segments(memory), true);
    }

    /** Room for descriptor {@code index}: grows the arrays (a chain may be up to 32768 descriptors). */
    void ensure(int index) {
        if (index == addr.length) {
            addr = Arrays.copyOf(addr, index * 2);
            len = Arrays.copyOf(len, index * 2);
        }
    }

    /** Sets the chain after a walk filled {@code addr[0, count)} and {@code len[0, count)}. */
    SplitChain reuse(int head, int count, int readable, long readableBytes, long writableBytes) {
        this.head = head;
        this.count = count;
        this.readable = readable;
        this.readableBytes = readableBytes;
        this.writableBytes = writableBytes;
        this.readerTaken = false;
        this.writerTaken = false;
        return this;
    }

    @Override
    public int head() {
        return head;
    }

    @Override
    public int bufferCount() {
        return count;
    }

    @Override
    public long readableBytes() {
        return readableBytes;
    }

    @Override
    public long writableBytes() {
        return writableBytes;
    }

    @Override
    public ChainReader reader() {
        if (!readerTaken) {
            readerTaken = true;
            reader.segments().init(addr, len, 0, readable, readableBytes);
            reader.recycle();
            return reader;
        }
        return new SplitChainReader(new Segments(memory).init(addr, len, 0, readable, readableBytes), false);
    }

    @Override
    public ChainWriter writer() {
        if (!writerTaken) {
            writerTaken = true;
            writer.segments().init(addr, len, readable, count, writableBytes);
            writer.recycle();
            return writer;
        }
        return new SplitChainWriter(new Segments(memory).init(addr, len, readable, count, writableBytes), false);
    }

    @Override
    public String toString() {
        return "chain(head=" + head + ", buffers=" + count + ", readable=" + readableBytes + ", writable="
                + writableBytes + ")";
    }
}
