package io.kickplug.benchmarks;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.NullBackend;
import io.kickplug.blk.device.BlkDeviceSpec;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.virtio.testkit.InlineIoThread;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A whole drain of {@value #N} virtio-blk requests through {@link VirtioBlkDevice} on a null backend:
 * pop, parse, track, execute, complete (status byte, used-ring push), notification decision. The driver
 * side is in-process and cheap: the {@value #N} chains (16-byte header, 4 KiB device-writable data, 1-byte
 * status: 4k reads) are written once; per invocation it puts their heads in the available ring, publishes
 * avail.idx once (release) and notifies the queue, whose handler runs inline on the benchmark thread
 * ({@link InlineIoThread}). One JMH operation is one request ({@link OperationsPerInvocation}), so with
 * {@code -prof gc} {@code gc.alloc.rate.norm} is bytes allocated per request.
 *
 * <p>Run: {@code java -jar benchmarks/target/benchmarks.jar BlkDrainBenchmark -prof gc}
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 2)
@Measurement(iterations = 5, time = 2)
@Fork(1)
public class BlkDrainBenchmark {

    /** Requests per drain: a queue depth of 64, as kp:fio's QD64. */
    static final int N = 64;
    private static final int QUEUE_SIZE = 256;
    private static final int DATA = 4096;

    /** VIRTIO_RING_F_EVENT_IDX negotiated (changes the notification decision). */
    @Param({"true", "false"})
    public boolean eventIdx;

    private GuestMemory memory;
    private QueueLayout layout;
    private VirtioBlkDevice device;
    private int availIdx;
    private int usedSeen;
    private Signals signals;

    private static final class Signals implements DeviceSignals {
        long interrupts;
        volatile GuestFaultException fault;

        @Override
        public void usedBuffer(int queueIndex) {
            interrupts++;
        }

        @Override
        public void configChanged() {
        }

        @Override
        public void deviceError(GuestFaultException f) {
            fault = f;
        }

        @Override
        public boolean needsReset() {
            return fault != null;
        }
    }

    @Setup(Level.Trial)
    public void setUp() {
        memory = OffHeapGuestMemory.allocate(2 << 20);
        layout = QueueLayout.contiguous(QUEUE_SIZE, 0);
        memory.fill(0, QueueLayout.contiguousBytes(QUEUE_SIZE), (byte) 0);
        long data = (QueueLayout.contiguousBytes(QUEUE_SIZE) + 4095) & ~4095L;
        long headers = data + (long) N * DATA;
        long statuses = headers + 16L * N;
        for (int i = 0; i < N; i++) {
            long header = headers + 16L * i;
            memory.writeU32(header, VirtioBlk.T_IN);
            memory.writeU32(header + 4, 0);
            memory.writeU64(header + 8, 8L * i); // distinct 4 KiB blocks
            desc(3 * i, header, 16, 1, 3 * i + 1); // NEXT
            desc(3 * i + 1, data + (long) DATA * i, DATA, 1 | 2, 3 * i + 2); // NEXT | WRITE
            desc(3 * i + 2, statuses + i, 1, 2, 0); // WRITE
        }
        long features = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC | VirtioBlk.F_FLUSH
                | (eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0);
        NullBackend backend = new NullBackend(1L << 30, false);
        device = new VirtioBlkDevice(BlkDeviceSpec.of("bench", backend, false, 1, QUEUE_SIZE,
                "bench".getBytes(StandardCharsets.US_ASCII), List.of(new InlineIoThread())));
        device.acceptsFeatures(features);
        signals = new Signals();
        SplitDeviceQueue queue = new SplitDeviceQueue(memory, 0, layout, features);
        device.activate(new DeviceActivation(features, memory, List.of(queue), signals));
    }

    private void desc(int index, long addr, int len, int flags, int next) {
        long d = layout.descTable() + 16L * index;
        memory.writeU64(d, addr);
        memory.writeU32(d + 8, len);
        memory.writeU16(d + 12, (short) flags);
        memory.writeU16(d + 14, (short) next);
    }

    @TearDown(Level.Trial)
    public void tearDown() {
        device.reset();
        device.close();
        if (signals.fault != null) {
            throw new IllegalStateException("device error during the benchmark", signals.fault);
        }
    }

    /** The driver makes {@value #N} requests available (one avail.idx store) and notifies once. */
    @Benchmark
    @OperationsPerInvocation(N)
    public int drain() {
        long ring = layout.availRing() + 4;
        for (int i = 0; i < N; i++) {
            memory.writeU16(ring + 2L * ((availIdx + i) & (QUEUE_SIZE - 1)), (short) (3 * i));
        }
        availIdx = (availIdx + N) & 0xffff;
        // Release: the ring entries before the index that publishes them (2.7.13.3).
        memory.writeU16Release(layout.availRing() + 2, (short) availIdx);
        device.queueNotify(0);
        int used = memory.readU16Acquire(layout.usedRing() + 2) & 0xffff;
        if (((used - usedSeen) & 0xffff) != N) {
            throw new IllegalStateException("drain used " + ((used - usedSeen) & 0xffff) + " of " + N
                    + (signals.fault != null ? ": " + signals.fault.getMessage() : ""));
        }
        usedSeen = used;
        // The driver keeps its used_event at what it has seen (EVENT_IDX): one interrupt per drain.
        memory.writeU16(layout.availRing() + 4 + 2L * QUEUE_SIZE, (short) used);
        return used;
    }
}
