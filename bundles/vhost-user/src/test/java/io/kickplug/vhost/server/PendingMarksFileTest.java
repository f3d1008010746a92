package io.kickplug.vhost.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.vhost.backend.DirtyMarks;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The file that keeps an export's pending dirty-log marks across an update of the vhost-user bundle: what is written
 * reads back; a file cut short, changed, stale or of another export is rejected with its reason, never applied.
 */
class PendingMarksFileTest {

    private static final long NOW = 1_800_000_000_000L;
    private static final DirtyMarks MARKS = DirtyMarks.ofPages(List.of(0L, 1L, 63L, 64L, 4097L, 131_071L, 1L << 30));

    @TempDir
    Path dir;

    private Path write(String export, long leftAt) throws Exception {
        Path f = dir.resolve(PendingMarksFile.fileName(export));
        PendingMarksFile.write(f, new PendingMarks.Entry(export, "/run/vm1.sock", MARKS, leftAt));
        return f;
    }

    @Test
    void whatIsWrittenReadsBack() throws Exception {
        Path f = write("vm disk/1 é", NOW - 1000);
        PendingMarks.Entry e = PendingMarksFile.read(f, "vm disk/1 é", NOW);
        assertEquals("vm disk/1 é", e.export());
        assertEquals("/run/vm1.sock", e.socket());
        assertEquals(NOW - 1000, e.leftAtMillis());
        assertEquals(MARKS, e.marks());
        assertEquals(MARKS.pageSet(), e.marks().pageSet());
        assertEquals("vm disk/1 é", PendingMarksFile.exportOf(f.getFileName().toString()));
        try (var files = Files.list(dir)) {
            assertEquals(List.of(f), files.toList(), "no temporary file left behind");
        }
    }

    @Test
    void aWriteReplacesTheFileWhole() throws Exception {
        Path f = write("d", NOW - 5000);
        DirtyMarks fewer = DirtyMarks.ofPages(List.of(7L));
        PendingMarksFile.write(f, new PendingMarks.Entry("d", "/s", fewer, NOW));
        assertEquals(fewer, PendingMarksFile.read(f, "d", NOW).marks());
    }

    @Test
    void aCorruptFileIsRejected() throws Exception {
        Path f = write("d", NOW);
        byte[] b = Files.readAllBytes(f);
        for (int at : new int[] {0, 9, b.length / 2, b.length - 20, b.length - 1}) {
            byte[] changed = b.clone();
            changed[at] ^= 0x10;
            Files.write(f, changed);
            PendingMarksFile.Rejected r = assertThrows(PendingMarksFile.Rejected.class,
                    () -> PendingMarksFile.read(f, "d", NOW), "byte " + at + " changed");
            assertTrue(r.getMessage().contains("checksum"), r.getMessage());
        }
        for (int length : new int[] {0, 3, 12, b.length - 1}) {
            byte[] cut = java.util.Arrays.copyOf(b, length);
            Files.write(f, cut);
            assertThrows(PendingMarksFile.Rejected.class, () -> PendingMarksFile.read(f, "d", NOW),
                    "cut to " + length + " bytes");
        }
    }

    @Test
    void aStaleFileIsRejected() throws Exception {
        Path old = write("d", NOW - PendingMarks.MAX_AGE_MILLIS - 1);
        PendingMarksFile.Rejected r = assertThrows(PendingMarksFile.Rejected.class,
                () -> PendingMarksFile.read(old, "d", NOW));
        assertTrue(r.getMessage().contains("stale"), r.getMessage());
        Path future = write("e", NOW + PendingMarksFile.CLOCK_SLACK_MILLIS + 1000);
        assertThrows(PendingMarksFile.Rejected.class, () -> PendingMarksFile.read(future, "e", NOW));
        Path fresh = write("f", NOW - PendingMarks.MAX_AGE_MILLIS + 1000);
        assertEquals(MARKS, PendingMarksFile.read(fresh, "f", NOW).marks());
    }

    @Test
    void aFileOfAnotherExportIsRejected() throws Exception {
        Path f = write("vm1", NOW);
        Path renamed = Files.move(f, dir.resolve(PendingMarksFile.fileName("vm2")));
        PendingMarksFile.Rejected r = assertThrows(PendingMarksFile.Rejected.class,
                () -> PendingMarksFile.read(renamed, "vm2", NOW));
        assertTrue(r.getMessage().contains("'vm1'"), r.getMessage());
    }

    @Test
    void namesThatAreNoMarksFilesAreNotExports() {
        assertNull(PendingMarksFile.exportOf("notes.txt"));
        assertNull(PendingMarksFile.exportOf("zz.marks"));
        assertNull(PendingMarksFile.exportOf(".marks"));
        assertNull(PendingMarksFile.exportOf(PendingMarksFile.fileName("d") + PendingMarksFile.TEMP_SUFFIX));
    }

    /** The store across a bundle update: saved, loaded by a new store, the file consumed; bad files dropped. */
    @Test
    void aNewStoreLoadsWhatTheOldOneSavedAndRejectsTheRest() throws Exception {
        AtomicLong clock = new AtomicLong(NOW);
        PendingMarks old = new PendingMarks(clock::get);
        old.carry("vm1", "/run/vm1.sock").left(MARKS);
        Path data = dir.resolve("data");
        old.save(data);
        PendingMarksFile.write(data.resolve(PendingMarksFile.fileName("vm2")),
                new PendingMarks.Entry("vm2", "/run/vm2.sock", MARKS, NOW - PendingMarks.MAX_AGE_MILLIS - 1));
        Files.writeString(data.resolve(PendingMarksFile.fileName("vm3")), "garbage");
        Files.writeString(data.resolve("stray.tmp"), "half written");

        clock.addAndGet(5000);
        PendingMarks next = new PendingMarks(clock::get);
        next.load(data);
        try (var files = Files.list(data)) {
            assertEquals(0, files.count(), "every file read is removed");
        }
        assertEquals(MARKS.pages(), next.pendingPages("vm1"));
        assertEquals(0, next.pendingPages("vm2"), "stale: rejected");
        assertEquals(0, next.pendingPages("vm3"), "corrupt: rejected");
        assertNull(next.carry("vm1", "/run/other.sock").take(), "another socket: not given");
        assertNull(next.carry("vm1", "/run/vm1.sock").take(), "dropped with the refusal above");
    }

    @Test
    void pendingMarksGrowStaleAndMerge() {
        AtomicLong clock = new AtomicLong(NOW);
        PendingMarks store = new PendingMarks(clock::get);
        var carry = store.carry("d", "/s");
        carry.left(DirtyMarks.ofPages(List.of(1L, 2L)));
        carry.left(DirtyMarks.ofPages(List.of(2L, 900L)));
        assertEquals(3, store.pendingPages("d"), "a second session's marks are ORed in");
        clock.addAndGet(PendingMarks.MAX_AGE_MILLIS + 1);
        assertNull(carry.take(), "stale marks are not given");
        carry.left(DirtyMarks.ofPages(List.of(5L)));
        carry.discard("the device started without logging");
        assertNull(carry.take());
        carry.left(DirtyMarks.ofPages(List.of(6L)));
        assertEquals(DirtyMarks.ofPages(List.of(6L)), carry.take());
        assertNull(carry.take(), "taken once");
    }
}
