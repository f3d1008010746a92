package io.kickplug.benchmarks;

import static io.kickplug.virtio.testkit.RawRing.*;

import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.packed.PackedDeviceQueue;
import io.kickplug.virtio.packed.PackedRing;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import io.kickplug.virtio.testkit.RawRing;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.infra.Blackhole;

/**
 * The device's per-request queue work: {@code pop()} of a virtio-blk shaped chain (16-byte readable header,
 * 4 KiB writable data, 1-byte writable status), then {@code pushUsed()}, on a split or a packed ring. Split: the
 * driver side re-publishes the same head with RawRing before each pop (two 16-bit stores). Packed: the ring's
 * descriptors are written once; before each pop the driver side stores the chain's flags for the current lap
 * (head last, release) and the head's length the previous used descriptor overwrote (three or one 16-bit stores
 * and one 32-bit store). Nearly all measured work is the device's either way.
 */
public class DeviceQueueBenchmark extends QueueBenchmarkParams {

    /** The chain as three descriptors of the queue's table, or one descriptor pointing to an indirect table. */
    @Param({"direct", "indirect"})
    public String layout;

    private RawRing splitRing;
    private DeviceQueue queue;
    private Runnable republish;

    @Setup(Level.Trial)
    public void setUp() {
        if (ring.equals("packed")) {
            setUpPacked();
            return;
        }
        OffHeapGuestMemory memory = OffHeapGuestMemory.allocate(1 << 20);
        RawRing ring = new RawRing(memory, 256, 0);
        splitRing = ring;
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
        republish = () -> splitRing.makeAvailable(0);
    }

    // Packed: a ring of 255 (no power of two needed, section 2.8) holds 85 direct chains of three exactly, so the
    // descriptors' addresses and lengths are written once; each request only flips its flags into the current lap.
    private OffHeapGuestMemory packedMemory;
    private long packedRing;
    private int packedSize;
    private int chainLength;
    private int pos;
    private boolean wrap = true;
    private final int[] chainFlags = new int[3];

    private void setUpPacked() {
        packedMemory = OffHeapGuestMemory.allocate(1 << 20);
        packedSize = layout.equals("direct") ? 255 : 256;
        QueueLayout l = RingFormat.PACKED.layout(packedSize, 0);
        packedRing = l.descTable();
        long data = 0x10000;
        long header = data;
        long buffer = data + 0x1000;
        long status = data + 0x3000;
        if (layout.equals("direct")) {
            chainLength = 3;
            long[] addr = {header, buffer, status};
            int[] len = {16, 4096, 1};
            int[] flags = {PackedRing.DESC_F_NEXT, PackedRing.DESC_F_NEXT | PackedRing.DESC_F_WRITE,
                PackedRing.DESC_F_WRITE};
            for (int i = 0; i < packedSize; i++) {
                writePacked(i, addr[i % 3], len[i % 3]);
            }
            System.arraycopy(flags, 0, chainFlags, 0, 3);
        } else {
            chainLength = 1;
            long table = data + 0x4000;
            long[] addr = {header, buffer, status};
            int[] len = {16, 4096, 1};
            for (int k = 0; k < 3; k++) {
                packedMemory.writeU64(table + 16L * k, addr[k]);
                packedMemory.writeU32(table + 16L * k + 8, len[k]);
                packedMemory.writeU16(table + 16L * k + 14, (short) (k == 0 ? 0 : PackedRing.DESC_F_WRITE));
            }
            for (int i = 0; i < packedSize; i++) {
                writePacked(i, table, 48);
            }
            chainFlags[0] = PackedRing.DESC_F_INDIRECT;
        }
        long features = VirtioFeatures.RING_PACKED | VirtioFeatures.RING_INDIRECT_DESC
                | (eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0);
        queue = new PackedDeviceQueue(packedMemory, 0, l, features);
        republish = this::republishPacked;
    }

    private void writePacked(int i, long addr, int len) {
        packedMemory.writeU64(packedRing + 16L * i, addr);
        packedMemory.writeU32(packedRing + 16L * i + 8, len);
        packedMemory.writeU16(packedRing + 16L * i + 12, (short) 0); // buffer ID 0: one chain in flight at a time
    }

    /** The driver makes the next chain available: its flags for this lap, the head's last (release). */
    private void republishPacked() {
        int head = pos;
        boolean headWrap = wrap;
        // The previous used descriptor may have overwritten this head's length (it was used at this position).
        packedMemory.writeU32(packedRing + 16L * head + 8, chainLength == 3 ? 16 : 48);
        for (int k = 1; k < chainLength; k++) {
            int at = (head + k) % packedSize;
            boolean w = head + k >= packedSize ? !headWrap : headWrap;
            packedMemory.writeU16(packedRing + 16L * at + 14, (short) (chainFlags[k] | PackedRing.availFlags(w)));
        }
        pos += chainLength;
        if (pos >= packedSize) {
            pos -= packedSize;
            wrap = !wrap;
        }
        packedMemory.writeU16Release(packedRing + 16L * head + 14,
                (short) (chainFlags[0] | PackedRing.availFlags(headWrap)));
    }

    /** pop + pushUsed: the queue work of one request. */
    @Benchmark
    public int popPush() {
        republish.run();
        DescriptorChain chain = queue.pop();
        queue.pushUsed(chain.head(), 4097);
        return chain.bufferCount();
    }

    /** pop + pushUsed + needsNotification, as a device completes a batch of one. */
    @Benchmark
    public void popPushNotify(Blackhole bh) {
        republish.run();
        DescriptorChain chain = queue.pop();
        queue.pushUsed(chain.head(), 4097);
        bh.consume(queue.needsNotification());
    }
}
