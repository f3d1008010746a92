package io.kickplug.virtio.packed;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** Property-based tests of the packed ring's wrap-counter and position arithmetic (VIRTIO 1.2 sections 2.8.1, 2.8.10). */
class PackedRingPropertiesTest {

    /** Advancing by n is n single steps, each flipping the wrap counter at the end of the ring (section 2.8.1). */
    @Property(tries = 1000)
    void advanceIsRepeatedSingleSteps(@ForAll @IntRange(min = 1, max = 32768) int size,
            @ForAll @IntRange(min = 0, max = 32767) int pos, @ForAll boolean wrap, @ForAll @IntRange(min = 0, max = 64) int n) {
        int p = pos % size;
        int step = PackedRing.encode(p, wrap);
        int k = Math.min(n, size);
        for (int i = 0; i < k; i++) {
            int np = PackedRing.position(step) + 1;
            step = np == size ? PackedRing.encode(0, !PackedRing.wrap(step)) : PackedRing.encode(np, PackedRing.wrap(step));
        }
        assertEquals(step, PackedRing.advance(PackedRing.encode(p, wrap), k, size));
    }

    /**
     * The packed {@code vring_need_event} against its definition: the event descriptor (position, wrap) is one of
     * the {@code moved} descriptors just before {@code now}, found by walking back one at a time.
     */
    @Property(tries = 3000)
    void needEventMatchesWalkingBack(@ForAll @IntRange(min = 1, max = 300) int size,
            @ForAll @IntRange(min = 0, max = 299) int nowPos, @ForAll boolean nowWrap,
            @ForAll @IntRange(min = 0, max = 299) int moved, @ForAll @IntRange(min = 0, max = 299) int eventPos,
            @ForAll boolean eventWrap) {
        int now = PackedRing.encode(nowPos % size, nowWrap);
        int m = moved % (size + 1);
        int event = PackedRing.encode(eventPos % size, eventWrap);
        boolean expected = false;
        int p = nowPos % size;
        boolean w = nowWrap;
        for (int i = 0; i < m; i++) {
            p--;
            if (p < 0) {
                p = size - 1;
                w = !w;
            }
            if (PackedRing.encode(p, w) == event) {
                expected = true;
            }
        }
        assertEquals(expected, PackedRing.needEvent(event, now, m, size));
    }

    /** Availability and use are exclusive for every flag pattern and lap (section 2.8.1). */
    @Property(tries = 500)
    void availableAndUsedBitsAreExclusive(@ForAll @IntRange(min = 0, max = 0xffff) int flags, @ForAll boolean wrap) {
        assertFalse(PackedRing.isAvailable(flags, wrap) && PackedRing.isUsed(flags, wrap));
        assertTrue(PackedRing.isAvailable(PackedRing.availFlags(wrap), wrap));
        assertTrue(PackedRing.isUsed(PackedRing.usedFlags(wrap), wrap));
        assertFalse(PackedRing.isAvailable(PackedRing.usedFlags(wrap), wrap), "a used descriptor is not available again");
        assertFalse(PackedRing.isUsed(PackedRing.availFlags(wrap), wrap));
        assertFalse(PackedRing.isAvailable(PackedRing.availFlags(!wrap), wrap), "the other lap's descriptor");
    }

    /**
     * Whatever size (no power of two needed), start position and wrap counter, chains of 1-3 descriptors (direct
     * or indirect) go through the device, are used in a random order, and come back to the driver with their
     * tokens, across many wraps; both sides end at the same position and wrap counter.
     */
    @Property(tries = 300)
    void chainsSurviveWrapsInAnyCompletionOrder(@ForAll @IntRange(min = 3, max = 37) int size,
            @ForAll @IntRange(min = 0, max = 36) int startPos, @ForAll boolean startWrap,
            @ForAll @IntRange(min = 1, max = 30) int rounds, @ForAll boolean eventIdx, @ForAll long seed) {
        OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 18);
        QueueLayout layout = RingFormat.PACKED.layout(size, 0);
        long features = VirtioFeatures.RING_PACKED | VirtioFeatures.RING_INDIRECT_DESC
                | (eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0);
        PackedDriverQueue drv = new PackedDriverQueue(mem, layout, features, 0x20000, 4);
        int start = PackedRing.encode(startPos % size, startWrap);
        drv.resumeAt(start);
        PackedDeviceQueue dev = new PackedDeviceQueue(mem, 0, layout, features);
        dev.setIndices(start, start);
        Random rnd = new Random(seed);
        long data = 0x8000;
        int token = 0;
        for (int r = 0; r < rounds; r++) {
            List<Integer> added = new ArrayList<>();
            while (true) {
                int n = 1 + rnd.nextInt(3);
                List<BufferSpec> bufs = new ArrayList<>();
                for (int k = 0; k < n - 1; k++) {
                    bufs.add(BufferSpec.readable(data + 64L * k, 8));
                }
                bufs.add(BufferSpec.writable(data + 0x400, 4));
                if (!drv.add(bufs, rnd.nextBoolean(), token)) {
                    break;
                }
                added.add(token++);
                if (rnd.nextInt(4) == 0) {
                    break;
                }
            }
            List<DescriptorChain> popped = new ArrayList<>();
            DescriptorChain c;
            while ((c = dev.pop()) != null) {
                popped.add(c);
            }
            assertEquals(added.size(), popped.size());
            java.util.Collections.shuffle(popped, rnd);
            List<Integer> order = new ArrayList<>();
            for (DescriptorChain p : popped) {
                order.add(p.head());
                dev.pushUsedBatched(p.head(), (int) p.writableBytes());
            }
            dev.publishUsed();
            List<Object> got = new ArrayList<>();
            UsedBuffer u;
            while ((u = drv.getUsed()) != null) {
                assertEquals(4, u.writtenBytes());
                got.add(u.token());
            }
            assertEquals(added.size(), got.size());
            assertTrue(got.containsAll(added));
            assertEquals(size, drv.freeDescriptors());
            assertEquals(dev.nextAvail(), dev.nextUsed(), "every descriptor taken was used");
        }
        assertFalse(dev.hasAvailable());
        assertFalse(drv.hasUsed());
    }
}
