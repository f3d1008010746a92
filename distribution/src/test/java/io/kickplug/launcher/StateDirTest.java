package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StateDirTest {

    @TempDir
    Path tmp;

    private Path dir;
    private final List<Path> jars = new ArrayList<>();

    @BeforeEach
    void jars() throws Exception {
        dir = tmp.resolve("state");
        Files.createDirectories(tmp.resolve("dist"));
        for (String name : List.of("a.jar", "b.jar")) {
            jars.add(Files.writeString(tmp.resolve("dist").resolve(name), "jar " + name));
        }
    }

    /** Opens the state as a start would, "installs" (Felix's storage appears) and closes it, as at exit. */
    private boolean start() throws Exception {
        StateDir state = StateDir.open(dir, jars);
        assertNotNull(state, "locked by nobody else");
        try {
            boolean reused = state.reusable();
            Files.createDirectories(state.felixStorage());
            state.installed();
            return reused;
        } finally {
            state.close();
        }
    }

    @Test
    void theSecondStartReusesTheCache() throws Exception {
        assertFalse(start(), "nothing to reuse at first");
        assertTrue(start());
        assertTrue(start());
    }

    @Test
    void aRebuiltJarMakesTheCacheAgain() throws Exception {
        start();
        // Same size, another modification time (a rebuild of a jar with the same content length).
        Files.setLastModifiedTime(jars.get(0), FileTime.fromMillis(Files.getLastModifiedTime(jars.get(0)).toMillis()
                - 60_000));
        assertFalse(start());
        assertTrue(start());
    }

    @Test
    void aJarReplacedWithTheSameSizeAndTimeMakesTheCacheAgain() throws Exception {
        start();
        // Another file (another inode) with the same length and modification time, as `cp -p` or an unpacked
        // archive would leave.
        Path jar = jars.get(1);
        FileTime time = Files.getLastModifiedTime(jar);
        Path other = Files.writeString(tmp.resolve("other.jar"), "jar x.jar");
        Files.setLastModifiedTime(other, time);
        Files.move(other, jar, StandardCopyOption.REPLACE_EXISTING);
        assertEquals(time, Files.getLastModifiedTime(jar));
        assertFalse(start());
    }

    @Test
    void anAddedOrRemovedJarMakesTheCacheAgain() throws Exception {
        start();
        jars.add(Files.writeString(tmp.resolve("dist").resolve("c.jar"), "jar c"));
        assertFalse(start());
        assertTrue(start());
        jars.remove(0);
        assertFalse(start());
    }

    @Test
    void aStartKilledBeforeItsBundlesWereInstalledLeavesNoRecord() throws Exception {
        start();
        Files.writeString(jars.get(0), "a longer jar");
        StateDir killed = StateDir.open(dir, jars);
        assertFalse(killed.reusable());
        assertFalse(Files.exists(dir.resolve(StateDir.RECORD)), "record removed before Felix empties its storage");
        killed.close(); // no installed(): killed while installing
        assertFalse(start(), "made again");
    }

    @Test
    void aForgottenCacheIsMadeAgain() throws Exception {
        start();
        StateDir failed = StateDir.open(dir, jars);
        assertTrue(failed.reusable());
        failed.forget(); // the framework did not start from it
        failed.close();
        assertFalse(start());
    }

    @Test
    void aMissingFelixStorageIsMadeAgain() throws Exception {
        start();
        Files.delete(dir.resolve("felix"));
        assertFalse(start());
    }

    @Test
    void oneProcessAtATime() throws Exception {
        StateDir first = StateDir.open(dir, jars);
        try {
            assertNull(StateDir.open(dir, jars), "in use");
        } finally {
            first.close();
        }
        StateDir again = StateDir.open(dir, jars);
        assertNotNull(again, "free once closed");
        again.close();
    }

    @Test
    void configurationsOfAnEarlierRunAreEmptiedInADefaultFolder() throws Exception {
        Path config = dir.resolve("config");
        Files.createDirectories(config.resolve("io").resolve("kickplug"));
        Files.writeString(config.resolve("io").resolve("kickplug").resolve("disk.config"), "name=\"d0\"");
        StateDir state = StateDir.open(dir, jars);
        try {
            assertFalse(Files.exists(config), "a daemon's default folder is a cache: its disks come from its statements");
        } finally {
            state.close();
        }
    }

    @Test
    void configurationsAreKeptInANamedStateFolderAtStartAndExit() throws Exception {
        Path disk = dir.resolve("config").resolve("io").resolve("kickplug").resolve("disk.config");
        Files.createDirectories(disk.getParent());
        Files.writeString(disk, "name=\"d0\"");
        StateDir state = StateDir.open(dir, jars, true);
        try {
            assertTrue(state.keepsConfig());
            assertEquals("name=\"d0\"", Files.readString(disk), "--state DIR: the disks of the last run come back");
            state.resetConfig(); // what the launcher calls at exit
            assertTrue(Files.exists(disk), "kept for the next start");
            Files.createDirectories(state.felixStorage());
            state.installed();
        } finally {
            state.close();
        }
        // A rebuilt distribution makes the bundle cache again, and the configurations stay.
        Files.writeString(jars.get(0), "changed");
        StateDir rebuilt = StateDir.open(dir, jars, true);
        try {
            assertFalse(rebuilt.reusable());
            assertTrue(Files.exists(disk));
        } finally {
            rebuilt.close();
        }
    }

    @Test
    void defaultStateFollowsXdgThenHome() {
        Path felix = Path.of("/opt/kickplug/felix");
        Path xdg = FrameworkStorage.defaultState(felix, Map.of("XDG_STATE_HOME", "/x/state", "HOME", "/home/u"));
        Path home = FrameworkStorage.defaultState(felix, Map.of("HOME", "/home/u"));
        assertEquals(Path.of("/x/state/kickplug"), xdg.getParent());
        assertEquals(Path.of("/home/u/.local/state/kickplug"), home.getParent());
        assertEquals(xdg.getFileName(), home.getFileName(), "named after the distribution's folder");
        assertFalse(xdg.getFileName().equals(
                FrameworkStorage.defaultState(Path.of("/srv/kp/felix"), Map.of("HOME", "/h")).getFileName()),
                "two distributions, two caches");
        assertEquals(home, FrameworkStorage.defaultState(felix, Map.of("XDG_STATE_HOME", "relative", "HOME", "/home/u")),
                "a relative XDG_STATE_HOME is ignored, as the XDG specification says");
        assertNull(FrameworkStorage.defaultState(felix, Map.of()));
    }
}
