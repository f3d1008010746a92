package io.kickplug.vhost.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The recovery step of inflight tracking (libvhost-user vu_check_queue_inflights) on an area in a heap buffer. */
class InflightQueueTest {

    private static final int SIZE = 8;

    private static ByteBuffer area() {
        return ByteBuffer.allocate((int) InflightRegion.queueBytes(SIZE)).order(ByteOrder.LITTLE_ENDIAN);
    }

    /** An area a previous back-end used (version 1) that recorded used index {@code usedIdx}. */
    private static ByteBuffer recordedArea(int usedIdx) {
        ByteBuffer a = area();
        a.putShort(InflightRegion.OFF_VERSION, (short) 1);
        a.putShort(InflightRegion.OFF_USED_IDX, (short) usedIdx);
        return a;
    }

    private static void inflight(ByteBuffer a, int head, long counter) {
        a.put(InflightQueue.desc(head), (byte) 1);
        a.putLong(InflightQueue.desc(head) + 8, counter);
    }

    @Test
    void aFreshAreaIsInitialisedAndResubmitsNothing() {
        ByteBuffer a = area();
        InflightQueue.Recovery r = InflightQueue.recover(a, 5, SIZE);
        assertTrue(r.fresh());
        assertEquals(List.of(), r.resubmit());
        assertEquals(InflightRegion.VERSION, a.getShort(InflightRegion.OFF_VERSION));
        assertEquals(5, a.getShort(InflightRegion.OFF_USED_IDX));
    }

    @Test
    void inFlightHeadsAreResubmittedInTheOrderTheyWereTakenAndAvailContinuesAfterThem() {
        ByteBuffer a = recordedArea(0xfffe);
        inflight(a, 6, 41);
        inflight(a, 2, 40);
        inflight(a, 3, 42);
        InflightQueue.Recovery r = InflightQueue.recover(a, 0xfffe, SIZE);
        assertEquals(List.of(2, 6, 3), r.resubmit(), "ordered by counter");
        assertEquals(43, r.nextCounter());
        assertEquals(1, r.nextAvail(), "used index 0xfffe + 3 wraps to 1");
    }

    @Test
    void aBatchPublishedInTheUsedRingButNotRecordedIsFinished() {
        // The back-end died between publishing used.idx and clearing the head: the used ring is ahead of the
        // area, so the last batch's head is no longer in flight.
        ByteBuffer a = recordedArea(9);
        a.putShort(InflightRegion.OFF_LAST_BATCH_HEAD, (short) 4);
        inflight(a, 4, 7);
        inflight(a, 1, 8);
        InflightQueue.Recovery r = InflightQueue.recover(a, 10, SIZE);
        assertEquals(List.of(1), r.resubmit());
        assertEquals(11, r.nextAvail());
        assertEquals(0, a.get(InflightQueue.desc(4)));
        assertEquals(10, a.getShort(InflightRegion.OFF_USED_IDX));
    }

    @Test
    void aWholeBatchPublishedButNotRecordedIsFinishedFromTheUsedRing() {
        // Batched publication (issue 12): three completions went out with one used.idx store, and the back-end
        // died before clearing their flags. Their heads are read from the used ring: none is resubmitted.
        ByteBuffer a = recordedArea(0xffff);
        a.putShort(InflightRegion.OFF_LAST_BATCH_HEAD, (short) 6);
        inflight(a, 5, 1);
        inflight(a, 2, 2);
        inflight(a, 6, 3);
        inflight(a, 0, 4); // taken, not completed
        int[] usedRing = {2, 6, 0, 0, 0, 0, 0, 5}; // entries at used index 0xffff (slot 7), 0, 1
        InflightQueue.Recovery r = InflightQueue.recover(a, 2, SIZE, i -> usedRing[i % SIZE]);
        assertEquals(List.of(0), r.resubmit());
        assertEquals(3, r.nextAvail());
        assertEquals(0, a.get(InflightQueue.desc(5)));
        assertEquals(0, a.get(InflightQueue.desc(2)));
    }
}
