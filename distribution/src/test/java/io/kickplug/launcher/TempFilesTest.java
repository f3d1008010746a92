package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TempFilesTest {

    @TempDir
    Path tmp;
    @TempDir
    Path shm;

    /** A process id that is not running: the largest pid Linux allows plus one is never used. */
    private static final long DEAD_PID = 4_194_305L;

    private static void age(Path p) throws Exception {
        Files.setLastModifiedTime(p, FileTime.from(Instant.now().minus(TempFiles.UNLOCKED_GRACE).minusSeconds(5)));
    }

    @Test
    void theFolderThisProcessHoldsIsNotStale() throws Exception {
        Path mine = TempFiles.createLocked(tmp);
        assertTrue(mine.getFileName().toString().startsWith("kickplug-felix-" + ProcessHandle.current().pid() + "-"));
        assertEquals(ProcessHandle.current().pid() + "\n", Files.readString(mine.resolve(TempFiles.PID)));
        assertFalse(TempFiles.stale(mine));
        assertEquals(List.of(), TempFiles.sweep(tmp, shm));
        assertTrue(Files.isDirectory(mine));
    }

    @Test
    void anUnlockedFolderOfADeadProcessIsRemovedWithItsContents() throws Exception {
        Path dead = Files.createDirectory(tmp.resolve("kickplug-felix-" + DEAD_PID + "-123"));
        Files.createFile(dead.resolve(TempFiles.LOCK));
        Files.createDirectories(dead.resolve("bundle1/version0.0"));
        Files.writeString(dead.resolve("bundle1/version0.0/bundle.jar"), "x");
        assertTrue(TempFiles.stale(dead));
        assertEquals(List.of(), TempFiles.sweep(tmp, shm));
        assertFalse(Files.exists(dead));
    }

    @Test
    void anUnlockedFolderOfALiveProcessIsKeptWhileItIsYoung() throws Exception {
        // Its owner created the lock file an instant ago and is about to lock it (pid 1 is always alive).
        Path young = Files.createDirectory(tmp.resolve("kickplug-felix-1-9"));
        Files.createFile(young.resolve(TempFiles.LOCK));
        assertFalse(TempFiles.stale(young));
        age(young);
        assertTrue(TempFiles.stale(young), "an old unlocked folder: its pid was reused by another process");
    }

    @Test
    void aFolderWithoutLockFileIsRemovedOnlyWhenItsProcessIsGoneAndItIsOld() throws Exception {
        Path legacy = Files.createDirectory(tmp.resolve("kickplug-felix-1234567890"));
        Path starting = Files.createDirectory(tmp.resolve("kickplug-felix-" + DEAD_PID + "-1"));
        assertFalse(TempFiles.stale(legacy), "no pid in the name: cannot tell, kept");
        assertFalse(TempFiles.stale(starting), "just created");
        age(starting);
        age(legacy);
        assertTrue(TempFiles.stale(starting));
        assertFalse(TempFiles.stale(legacy));
        TempFiles.sweep(tmp, shm);
        assertFalse(Files.exists(starting));
        assertTrue(Files.exists(legacy));
    }

    @Test
    void otherFilesAreNotTouched() throws Exception {
        Path other = Files.createDirectory(tmp.resolve("felix-cache"));
        Path similar = Files.createFile(tmp.resolve("kickplug-felix-" + DEAD_PID + "-file"));
        age(other);
        age(similar);
        TempFiles.sweep(tmp, shm);
        assertTrue(Files.exists(other));
        assertTrue(Files.exists(similar), "a plain file is not a cache folder");
    }

    @Test
    void inflightFilesOlderThanAMinuteAreRemoved() throws Exception {
        Path old = Files.createFile(shm.resolve("kickplug-inflight-1.shm"));
        Path fresh = Files.createFile(shm.resolve("kickplug-inflight-2.shm"));
        age(old);
        TempFiles.sweep(tmp, shm);
        assertFalse(Files.exists(old));
        assertTrue(Files.exists(fresh), "one being created right now");
    }

    @Test
    void pidOfReadsTheNamesPid() {
        assertEquals(42, TempFiles.pidOf("kickplug-felix-42-123456"));
        assertEquals(-1, TempFiles.pidOf("kickplug-felix-123456"));
        assertEquals(-1, TempFiles.pidOf("kickplug-felix-x-1"));
        assertEquals(-1, TempFiles.pidOf("other-42-1"));
    }
}
