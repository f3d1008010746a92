package io.kickplug.virtio.chain;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.GuestFaultException;
import java.util.Arrays;

/**
 * A validated chain: buffers {@code [0, readable)} are device-readable, the rest device-writable. Shared by
 * the split and the packed ring bundles (each embeds this package privately): what a chain is once its
 * descriptors are read does not depend on the ring format, and neither do the checks of one buffer
 * ({@link #add}): readable before writable, inside guest memory, at most 2^32 bytes in all.
 *
 * <p>Pooled: a device queue keeps one per descriptor head (split) or buffer ID (packed) and refills it
 * ({@link #begin}, {@link #add}, {@link #finish}) each time that head is popped. A head can be popped again only
 * after it was pushed to the used ring (the queue refuses a head in flight, sections 2.7.13 and 2.8.21), so the
 * chain, its cursors and the views they returned are never reused while the request that owns them is in
 * flight. The first {@link #reader()} and {@link #writer()} per pop return the chain's own cursors; later calls
 * make fresh ones, as before.
 */
public final class PooledChain implements DescriptorChain {

    /**
     * The VIRTIO 1.2 sections of the rules {@link #add} checks, per ring format.
     *
     * @param order device-writable buffers come after all device-readable ones
     * @param range a buffer lies inside guest memory
     * @param total a chain is at most 2^32 bytes
     */
    public record Rules(String order, String range, String total) {
        /** Split ring: sections 2.7.4.2, 2.7.5, 2.7.5.2. */
        public static final Rules SPLIT = new Rules("2.7.4.2", "2.7.5", "2.7.5.2");
        /** Packed ring: sections 2.8.17 (order; the device's length limit) and 2.8.4 (address and length). */
        public static final Rules PACKED = new Rules("2.8.17", "2.8.4", "2.8.17");
    }

    private final GuestMemory memory;
    private final int queue;
    private final Rules rules;
    private int head;
    private long[] addr = new long[4];
    private int[] len = new int[4];
    private int count;
    private int readable;
    private long readableBytes;
    private long writableBytes;
    private boolean seenWritable;
    /** Descriptors of the ring itself the chain occupies (packed: what the used index skips). */
    private int ringDescriptors;
    private final PooledChainReader reader;
    private final PooledChainWriter writer;
    private boolean readerTaken;
    private boolean writerTaken;
    /** The byte {@link #prefetch} loaded; never read. */
    @SuppressWarnings("unused")
    private byte touched;

    /**
     * @param queue the queue's index, for fault messages
     * @param rules where the ring format's spec states the rules of {@link #add}
     */
    public PooledChain(GuestMemory memory, int queue, Rules rules) {
        this.memory = memory;
        this.queue = queue;
        this.rules = rules;
        this.reader = new PooledChainReader(new Segments(memory), true);
        this.writer = new PooledChainWriter(new Segments(memory), true);
    }

    /** Starts refilling the chain for a new walk. */
    public void begin() {
        count = 0;
        readable = 0;
        readableBytes = 0;
        writableBytes = 0;
        seenWritable = false;
    }

    /** Buffers added since {@link #begin}. */
    public int count() {
        return count;
    }

    /**
     * Appends one buffer of the chain that starts at {@code chainHead} after checking it: a device-readable
     * buffer after a device-writable one, a buffer outside guest memory, or a chain over 2^32 bytes in total
     * throws.
     *
     * @throws GuestFaultException naming the section of this ring format's rule
     */
    public void add(long address, int length, boolean writable, int chainHead) {
        if (writable) {
            seenWritable = true;
        } else if (seenWritable) {
            throw fault(rules.order(), "device-readable descriptor after a device-writable one in chain "
                    + chainHead);
        }
        long ulen = length & 0xffffffffL;
        if (!memory.isValidRange(address, ulen)) {
            throw fault(rules.range(), String.format("buffer at 0x%x (+%d) in chain %d is outside guest memory",
                    address, ulen, chainHead));
        }
        if (writable) {
            writableBytes += ulen;
        } else {
            readableBytes += ulen;
            readable++;
        }
        if (readableBytes + writableBytes > (1L << 32)) {
            throw fault(rules.total(), "descriptor chain " + chainHead + " is longer than 2^32 bytes");
        }
        if (count == addr.length) {
            // A chain may be up to 32768 descriptors (and an indirect table as long): grow on demand.
            addr = Arrays.copyOf(addr, count * 2);
            len = Arrays.copyOf(len, count * 2);
        }
        addr[count] = address;
        len[count] = length;
        count++;
    }

    private GuestFaultException fault(String section, String message) {
        return new GuestFaultException(section, "queue " + queue + ": " + message);
    }

    /**
     * Ends the walk: the chain is now the one of {@code head} (split: head descriptor index; packed: buffer
     * ID), taking {@code ringDescriptors} descriptors of the ring.
     */
    public PooledChain finish(int head, int ringDescriptors) {
        this.head = head;
        this.ringDescriptors = ringDescriptors;
        this.readerTaken = false;
        this.writerTaken = false;
        return this;
    }

    /** Descriptors of the ring the chain took (1 for an indirect one), as given to {@link #finish}. */
    public int ringDescriptors() {
        return ringDescriptors;
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

    /**
     * Loads the first byte of the first non-empty device-readable buffer (checked when the buffer was added); the
     * value goes to a field so that the load is not dropped as dead code.
     */
    @Override
    public void prefetch() {
        for (int i = 0; i < readable; i++) {
            if (len[i] != 0) {
                touched = memory.readU8(addr[i]);
                return;
            }
        }
    }

    @Override
    public int writableBufferCount() {
        return count - readable;
    }

    @Override
    public long writableBufferAddress(int i) {
        return addr[readable + i];
    }

    @Override
    public long writableBufferLength(int i) {
        return len[readable + i] & 0xffffffffL;
    }

    @Override
    public ChainReader reader() {
        if (!readerTaken) {
            readerTaken = true;
            reader.segments().init(addr, len, 0, readable, readableBytes);
            reader.recycle();
            return reader;
        }
        return new PooledChainReader(new Segments(memory).init(addr, len, 0, readable, readableBytes), false);
    }

    @Override
    public ChainWriter writer() {
        if (!writerTaken) {
            writerTaken = true;
            writer.segments().init(addr, len, readable, count, writableBytes);
            writer.recycle();
            return writer;
        }
        return new PooledChainWriter(new Segments(memory).init(addr, len, readable, count, writableBytes), false);
    }

    @Override
    public String toString() {
        return "chain(head=" + head + ", buffers=" + count + ", readable=" + readableBytes + ", writable="
                + writableBytes + ")";
    }
}
