package io.kickplug.virtio.queue;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.util.List;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;

/** Property-based tests of 16-bit ring index arithmetic (VIRTIO 1.2 sections 2.7.6, 2.7.7.2, 2.7.8). */
class RingPropertiesTest {

    /** vring_need_event against its definition: is event in the window [old, new) walked mod 2^16. */
    @Property(tries = 2000)
    void needEventMatchesWindowDefinition(@ForAll @IntRange(min = 0, max = 0xffff) int event,
            @ForAll @IntRange(min = 0, max = 0xffff) int old, @ForAll @IntRange(min = 0, max = 512) int step) {
        int newIdx = (old + step) & 0xffff;
        boolean inWindow = false;
        for (int i = 0; i < step; i++) {
            if (((old + i) & 0xffff) == event) {
                inWindow = true;
            }
        }
        assertEquals(inWindow, Ring.needEvent(event, newIdx, old));
    }

    @Property(tries = 1000)
    void distanceIsModular(@ForAll @IntRange(min = 0, max = 0xffff) int from,
            @ForAll @IntRange(min = 0, max = 0xffff) int n) {
        assertEquals(n, Ring.distance(from, (from + n) & 0xffff));
    }

    /**
     * Whatever index the rings start at, chains go through the device and come back in order across the
     * 16-bit wrap (section 2.7.6: idx wraps naturally at 65536).
     */
    @Property(tries = 200)
    void chainsSurviveIndexWrapAround(@ForAll @IntRange(min = 0, max = 0xffff) int start,
            @ForAll @IntRange(min = 1, max = 40) int rounds, @ForAll boolean eventIdx) {
        int size = 8;
        OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 16);
        QueueLayout layout = QueueLayout.contiguous(size, 0);
        long features = eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0;
        SplitDriverQueue drv = new SplitDriverQueue(mem, layout, features, -1, 0);
        drv.resumeAt(start);
        SplitDeviceQueue dev = new SplitDeviceQueue(mem, 0, layout, features);
        dev.setIndices(start, start);
        long data = 0x8000;
        int token = 0;
        int expected = 0;
        for (int r = 0; r < rounds; r++) {
            int batch = 1 + (r % (size / 2)); // two descriptors per chain
            for (int b = 0; b < batch; b++) {
                assertTrue(drv.add(List.of(BufferSpec.readable(data, 4), BufferSpec.writable(data + 64, 4)), false,
                        token++));
            }
            DescriptorChain c;
            int popped = 0;
            while ((c = dev.pop()) != null) {
                c.writer().writeU8(7);
                dev.pushUsed(c.head(), 1);
                popped++;
            }
            assertEquals(batch, popped);
            UsedBuffer u;
            while ((u = drv.getUsed()) != null) {
                assertEquals(expected++, u.token());
                assertEquals(1, u.writtenBytes());
            }
            assertEquals(token, expected);
        }
        assertEquals((start + token) & 0xffff, dev.nextAvail());
        assertEquals((start + token) & 0xffff, dev.nextUsed());
        assertEquals(size, drv.freeDescriptors());
    }
}
