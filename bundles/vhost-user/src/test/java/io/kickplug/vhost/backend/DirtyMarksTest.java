package io.kickplug.vhost.backend;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The marks a log holds, read out of it and ORed into another one, bounded by its size. */
class DirtyMarksTest {

    @Test
    void theBitsOfALogReadOutAndOredIntoAnotherLog() {
        DirtyLog.Bitmap old = DirtyLog.over(ByteBuffer.allocateDirect(64));
        Set<Long> pages = new TreeSet<>(List.of(0L, 5L, 63L, 64L, 200L, 511L));
        pages.forEach(old::mark);
        long[] dropped = new long[1];
        DirtyMarks m = DirtyMarks.of(old, dropped);
        assertEquals(pages, m.pageSet());
        assertEquals(0, dropped[0]);
        assertEquals(6, m.pages());
        assertEquals(4, m.wordCount());

        DirtyLog.Bitmap fresh = DirtyLog.over(ByteBuffer.allocateDirect(64));
        fresh.mark(300);
        assertEquals(0, m.orInto(fresh));
        for (long p = 0; p < 512; p++) {
            assertEquals(pages.contains(p) || p == 300, fresh.isMarked(p), "page " + p);
        }
    }

    @Test
    void pagesBeyondASmallerLogAreCountedAndNotMarked() {
        DirtyMarks m = DirtyMarks.ofPages(List.of(3L, 127L, 128L, 130L, 1000L));
        DirtyLog.Bitmap small = DirtyLog.over(ByteBuffer.allocateDirect(16)); // 128 pages
        assertEquals(3, m.orInto(small));
        assertTrue(small.isMarked(3) && small.isMarked(127));
    }

    @Test
    void marksMergeWordByWord() {
        DirtyMarks a = DirtyMarks.ofPages(List.of(1L, 64L, 1000L));
        DirtyMarks b = DirtyMarks.ofPages(List.of(2L, 64L, 65L, 5000L));
        long[] dropped = new long[1];
        DirtyMarks both = a.or(b, dropped);
        assertEquals(new TreeSet<>(List.of(1L, 2L, 64L, 65L, 1000L, 5000L)), both.pageSet());
        assertEquals(0, dropped[0]);
        assertEquals(both, b.or(a, dropped));
        assertEquals(a, a.or(DirtyMarks.none(), dropped));
    }

    @Test
    void malformedWordsAreRefused() {
        assertThrows(IllegalArgumentException.class, () -> new DirtyMarks(new long[] {2, 1}, new long[] {1, 1}));
        assertThrows(IllegalArgumentException.class, () -> new DirtyMarks(new long[] {1, 1}, new long[] {1, 1}));
        assertThrows(IllegalArgumentException.class, () -> new DirtyMarks(new long[] {-1}, new long[] {1}));
        assertThrows(IllegalArgumentException.class, () -> new DirtyMarks(new long[] {1}, new long[] {0}));
        assertThrows(IllegalArgumentException.class, () -> new DirtyMarks(new long[] {1}, new long[0]));
    }
}
