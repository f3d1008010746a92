package io.kickplug.benchmarks;

import static io.kickplug.virtio.testkit.RawRing.*;

import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import io.kickplug.virtio.testkit.RawRing;
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
 * The device's per-request queue work: {@code pop()} of a virtio-blk shaped chain (16-byte readable header,
 * 4 KiB writable data, 1-byte writable status), then {@code pushUsed()}. The driver side re-publishes the
 * same head with RawRing before each pop (two 16-bit stores), so nearly all measured work is the device's.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
public class DeviceQueueBenchmark {

    /** VIRTIO_RING_F_EVENT_IDX negotiated (changes the notification decision). */
    @Param({"false", "true"})
    public boolean eventIdx;

    /** The chain as three descriptors of the queue's table, or one descriptor pointing to an indirect table. */
    @Param({"direct", "indirect"})
    public String layout;

    private RawRing ring;
    private SplitDeviceQueue queue;

    @Setup(Level.Trial)
    public void setUp() {
        OffHeapGuestMemory memory = OffHeapGuestMemory.allocate(1 << 20);
        ring = new RawRing(memory, 256, 0);
        long data = ring.dataArea();
        long header = data;
        long buffer = data + 0x1000;
        long status = data + 0x3000;
        if (layout.equals("direct")) {
            ring.desc(0, header, 16, NEXT, 1).desc(1, buffer, 4096, NEXT | WRITE, 2).desc(2, status, 1, WRITE, 0);
        } else {
            long table = data + 0x4000;
            ring.indirectDesc(table, 0, header, 16, NEXT, 1).indirectDesc(table, 1, buffer, 4096, NEXT | WRITE, 2)
                    .indirectDesc(table, 2, status, 1, WRITE, 0);
            ring.desc(0, table, 48, INDIRECT, 0);
        }
        long features = VirtioFeatures.RING_INDIRECT_DESC | (eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0);
        queue = new SplitDeviceQueue(memory, 0, ring.layout(), features);
    }

    /** pop + pushUsed: the queue work of one request. */
    @Benchmark
    public int popPush() {
        ring.makeAvailable(0);
        DescriptorChain chain = queue.pop();
        queue.pushUsed(chain.head(), 4097);
        return chain.bufferCount();
    }

    /** pop + pushUsed + needsNotification, as a device completes a batch of one. */
    @Benchmark
    public void popPushNotify(Blackhole bh) {
        ring.makeAvailable(0);
        DescriptorChain chain = queue.pop();
        queue.pushUsed(chain.head(), 4097);
        bh.consume(queue.needsNotification());
    }
}
