package io.kickplug.benchmarks;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.SplitDriverQueue;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The driver's per-request queue work: {@code add()} of a 3-buffer chain (header, 4 KiB data, status),
 * {@code kickPrepare()}, then {@code getUsed()}. The device side completes minimally between them: it
 * reads the head from the avail ring and writes one used element and used.idx (release), no validation.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
public class DriverQueueBenchmark {

    /** VIRTIO_RING_F_EVENT_IDX negotiated (changes the kick decision). */
    @Param({"false", "true"})
    public boolean eventIdx;

    /** The chain as direct descriptors, or in an indirect table. */
    @Param({"false", "true"})
    public boolean indirect;

    private static final Object TOKEN = new Object();

    private GuestMemory memory;
    private SplitDriverQueue driver;
    private List<BufferSpec> buffers;
    private long avail;
    private long used;
    private int mask;
    private int deviceUsed;

    @Setup(Level.Trial)
    public void setUp() {
        int size = 256;
        memory = OffHeapGuestMemory.allocate(1 << 20);
        QueueLayout layout = QueueLayout.contiguous(size, 0);
        long data = (QueueLayout.contiguousBytes(size) + 4095) & ~4095L;
        long features = VirtioFeatures.RING_INDIRECT_DESC | (eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0);
        driver = new SplitDriverQueue(memory, layout, features, data + 0x10000, 64);
        buffers = List.of(BufferSpec.readable(data, 16), BufferSpec.writable(data + 0x1000, 4096),
                BufferSpec.writable(data + 0x3000, 1));
        avail = layout.availRing();
        used = layout.usedRing();
        mask = size - 1;
    }

    /** The minimal device: take the entry the driver just published and return it as used. */
    private void complete() {
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
