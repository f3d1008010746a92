package io.kickplug.virtio.queue;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import io.kickplug.api.virtio.DescriptorChain;

/** A validated chain: buffers {@code [0, readable)} are device-readable, the rest device-writable. */
final class SplitChain implements DescriptorChain {
    private final GuestMemory memory;
    private final int head;
    private final long[] addr;
    private final int[] len;
    private final int readable;
    private final long readableBytes;
    private final long writableBytes;

    SplitChain(GuestMemory memory, int head, long[] addr, int[] len, int readable, long readableBytes,
            long writableBytes) {
        this.memory = memory;
        this.head = head;
        this.addr = addr;
        this.len = len;
        this.readable = readable;
        this.readableBytes = readableBytes;
        this.writableBytes = writableBytes;
    }

    @Override
    public int head() {
        return head;
    }

    @Override
    public int bufferCount() {
        return addr.length;
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
        return new SplitChainReader(new Segments(memory, addr, len, 0, readable, 0, readableBytes));
    }

    @Override
    public ChainWriter writer() {
        return new SplitChainWriter(new Segments(memory, addr, len, readable, addr.length, 0, writableBytes));
    }

    @Override
    public String toString() {
        return "chain(head=" + head + ", buffers=" + addr.length + ", readable=" + readableBytes + ", writable="
                + writableBytes + ")";
    }
}
