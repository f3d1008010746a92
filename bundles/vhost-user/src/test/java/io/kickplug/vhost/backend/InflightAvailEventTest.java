package io.kickplug.vhost.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.SplitDriverQueue;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * The avail_event mode (VIRTIO 1.2 section 2.7.10, EVENT_IDX) of a split queue tracked in the inflight area: the
 * device configures its queues with {@link DeviceQueue#setAvailEventMode} before serving them, and a queue that
 * records in the inflight area (every queue of a QEMU front-end, which always sets one) must pass the mode on to
 * the ring it wraps. It did not: such a queue kept {@link AvailEventMode#ENABLE} whatever the device asked.
 */
class InflightAvailEventTest {

    private static final int SIZE = 8;
    private static final long FEATURES = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_EVENT_IDX;
    private static final QueueLayout LAYOUT = RingFormat.SPLIT.layout(SIZE, 0);
    private static final long DATA = 0x2000;

    private final OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 14);
    private final SplitDriverQueue driver = new SplitDriverQueue(mem, LAYOUT, FEATURES, -1, 0);

    private int availEvent() {
        return mem.readU16(LAYOUT.usedRing() + 4 + 8L * SIZE) & 0xffff;
    }

    private void add(int token) {
        assertTrue(driver.add(List.of(BufferSpec.readable(DATA + 64L * token, 16),
                BufferSpec.writable(DATA + 64L * token + 16, 1)), false, token));
    }

    /** Section 2.7.10 with {@link AvailEventMode#POP}: avail_event is the next index after every chain taken. */
    @Test
    void popModeReachesTheRingThroughTheInflightQueue() {
        ByteBuffer area = ByteBuffer.allocate((int) InflightRegion.queueBytes(SIZE)).order(ByteOrder.LITTLE_ENDIAN);
        DeviceQueue q = InflightQueue.start("t", 0, area, mem, LAYOUT, FEATURES, 0, new VirtqueueFactoryComponent(),
                new AtomicLong());
        q.setAvailEventMode(AvailEventMode.POP);
        add(1);
        add(2);
        assertNotNull(q.pop());
        assertEquals(1, availEvent(), "avail_event after the first pop (section 2.7.10, POP mode)");
        assertNotNull(q.pop());
        assertEquals(2, availEvent(), "avail_event after the second pop");
    }

    /** The same through the dirty log's wrapper around the inflight queue (a live migration's view). */
    @Test
    void popModeReachesTheRingThroughTheLoggedInflightQueue() {
        ByteBuffer area = ByteBuffer.allocate((int) InflightRegion.queueBytes(SIZE)).order(ByteOrder.LITTLE_ENDIAN);
        DeviceQueue inner = InflightQueue.start("t", 0, area, mem, LAYOUT, FEATURES, 0,
                new VirtqueueFactoryComponent(), new AtomicLong());
        DirtyLog log = new DirtyLog("t");
        DeviceQueue q = new LoggedQueue(inner, log, new LoggedMemory(mem, log));
        q.setAvailEventMode(AvailEventMode.POP);
        add(1);
        assertNotNull(q.pop());
        assertEquals(1, availEvent());
    }
}
