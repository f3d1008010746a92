package io.kickplug.benchmarks;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.packed.PackedDriverQueue;
import io.kickplug.virtio.packed.PackedRing;
import io.kickplug.virtio.queue.SplitDriverQueue;
import java.util.List;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The driver's per-request queue work: {@code add()} of a 3-buffer chain (header, 4 KiB data, status),
 * {@code kickPrepare()}, then {@code getUsed()}, on a split or a packed ring. The device side completes minimally
 * between them, no validation: split, it reads the head from the avail ring and writes one used element and
 * used.idx (release); packed, it reads the buffer ID at its position and writes the used descriptor's ID, length
 * and flags (release), then skips the chain's descriptors.
 */
public class DriverQueueBenchmark extends QueueBenchmarkParams {

    /** The chain as direct descriptors, or in an indirect table. */
    @Param({"false", "true"})
    public boolean indirect;

    private static final Object TOKEN = new Object();

    private GuestMemory memory;
    private DriverQueue driver;
    private List<BufferSpec> buffers;
    private long avail;
    private long used;
    private int mask;
    private int deviceUsed;

    @Setup(Level.Trial)
    public void setUp() {
        int size = 256;
        memory = OffHeapGuestMemory.allocate(1 << 20);
        RingFormat format = RingFormat.parse(ring);
        QueueLayout layout = format.layout(size, 0);
        long data = (format.bytes(size) + 4095) & ~4095L;
        long features = VirtioFeatures.RING_INDIRECT_DESC | (eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0)
                | format.feature();
        driver = format == RingFormat.PACKED ? new PackedDriverQueue(memory, layout, features, data + 0x10000, 64)
                : new SplitDriverQueue(memory, layout, features, data + 0x10000, 64);
        packed = format == RingFormat.PACKED;
        packedSize = size;
        chainLength = indirect ? 1 : 3;
        buffers = List.of(BufferSpec.readable(data, 16), BufferSpec.writable(data + 0x1000, 4096),
                BufferSpec.writable(data + 0x3000, 1));
        avail = layout.availRing();
        used = layout.usedRing();
        mask = size - 1;
    }

    private boolean packed;
    private int packedSize;
    private int chainLength;
    private int devicePos;
    private boolean deviceWrap = true;

    /** The minimal packed device: the descriptor at its position is the chain just added; mark it used. */
    private void completePacked() {
        long d = 16L * devicePos;
        memory.readU16Acquire(d + 14); // the head's flags: the chain is there
        int id = memory.readU16(d + 12) & 0xffff;
        memory.writeU16(d + 12, (short) id);
        memory.writeU32(d + 8, 1);
        memory.writeU16Release(d + 14, (short) PackedRing.usedFlags(deviceWrap));
        devicePos += chainLength;
        if (devicePos >= packedSize) {
            devicePos -= packedSize;
            deviceWrap = !deviceWrap;
        }
    }

    /** The minimal device: take the entry the driver just published and return it as used. */
    private void complete() {
        if (packed) {
            completePacked();
            return;
        }
        int availIdx = memory.readU16Acquire(avail + 2) & 0xffff;
        int head = memory.readU16(avail + 4 + 2L * ((availIdx - 1) & mask)) & 0xffff;
        long elem = used + 4 + 8L * (deviceUsed & mask);
        memory.writeU32(elem, head);
        memory.writeU32(elem + 4, 1);
        deviceUsed = (deviceUsed + 1) & 0xffff;
        memory.writeU16Release(used + 2, (short) deviceUsed);
    }

    /** add + kickPrepare + getUsed: the driver side of one request. */
    @Benchmark
    public void addKickGetUsed(Blackhole bh) {
        driver.add(buffers, indirect, TOKEN);
        bh.consume(driver.kickPrepare());
        complete();
        UsedBuffer u = driver.getUsed();
        bh.consume(u);
    }
}
