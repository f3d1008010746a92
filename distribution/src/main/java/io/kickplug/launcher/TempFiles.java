package io.kickplug.launcher;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileTime;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * The launcher's temporary files, named so that they can be told apart and removed when their process is gone.
 *
 * <p>A temporary Felix cache is {@code kickplug-felix-PID-RANDOM} in {@code java.io.tmpdir} (Felix's storage in its
 * {@code felix} subfolder). While the process
 * lives it holds an exclusive lock on {@value #LOCK} inside the folder (the kernel drops the lock when the
 * process dies, however it dies), and {@value #PID} names the process for people. At startup
 * {@link #sweep} removes every {@code kickplug-felix-*} folder whose lock it can take: one left by a daemon
 * that was killed (SIGKILL, OOM) before it could delete it. Folders without a lock file (an older Kickplug, or
 * one that is starting this instant) are removed only when their name carries the id of a process that no
 * longer exists and they are older than a minute.
 *
 * <p>junixsocket's native library, which it extracts to a temporary file at first use, goes into the cache
 * folder too ({@code org.newsclub.net.unix.library.tmpdir}), so it leaves with the folder. Inflight areas of
 * vhost-user ({@code kickplug-inflight-*.shm} in /dev/shm) are unlinked right after they are created; one
 * older than a minute was left by a process killed in between and is removed as well. Stale vhost-user
 * sockets are removed where they are bound again (an export refuses a live socket and replaces a dead one).
 */
final class TempFiles {

    /** Prefix of temporary Felix cache folders. */
    static final String CACHE_PREFIX = "kickplug-felix-";
    /** The lock file a live launcher holds in its temporary cache. */
    static final String LOCK = "kickplug.lock";
    /** The owner's process id, for people. */
    static final String PID = "kickplug.pid";
    private static final String INFLIGHT_PREFIX = "kickplug-inflight-";
    static final String JUNIXSOCKET_TMPDIR = "org.newsclub.net.unix.library.tmpdir";
    /** How old a folder without a lock file must be before it is taken for stale. */
    static final Duration UNLOCKED_GRACE = Duration.ofMinutes(1);

    /** Kept open (and locked) for the life of the process; closed by the OS at exit. */
    private static final List<FileChannel> HELD = new ArrayList<>();

    private TempFiles() {
    }

    /**
     * The launcher's one-line hook: removes stale folders and files of dead Kickplug processes, then creates this
     * process's temporary cache folder, locked, and points junixsocket's extraction there.
     *
     * @param err where one warning line per folder that cannot be removed goes
     */
    static Path createCache(PrintStream err) throws IOException {
        Path tmp = Path.of(System.getProperty("java.io.tmpdir"));
        for (String warning : sweep(tmp, Path.of("/dev/shm"))) {
            err.println("warning: " + warning);
        }
        Path dir = createLocked(tmp);
        if (System.getProperty(JUNIXSOCKET_TMPDIR) == null) {
            Path lib = Files.createDirectories(dir.resolve("native"));
            System.setProperty(JUNIXSOCKET_TMPDIR, lib.toString());
        }
        return dir;
    }

    /**
     * Where Felix keeps its storage inside a temporary cache folder: a subfolder, because Felix empties its
     * storage folder when it first initialises, which would take the lock file with it.
     */
    static String felixStorage(Path cache) {
        return cache.resolve("felix").toString();
    }

    /** Creates {@code kickplug-felix-PID-RANDOM} in {@code tmp} and locks it for this process. */
    static Path createLocked(Path tmp) throws IOException {
        long pid = ProcessHandle.current().pid();
        Path dir = Files.createTempDirectory(tmp, CACHE_PREFIX + pid + "-");
        FileChannel lock = FileChannel.open(dir.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        try {
            if (lock.tryLock() == null) {
                throw new IOException("cannot lock the new cache folder " + dir);
            }
        } catch (IOException | RuntimeException e) {
            lock.close();
            throw e;
        }
        synchronized (HELD) {
            HELD.add(lock);
        }
        Files.writeString(dir.resolve(PID), pid + "\n");
        return dir;
    }

    /**
     * Removes stale cache folders in {@code tmp} and stale inflight files in {@code shm} (which may be missing).
     *
     * @return one line per folder or file that looked stale but could not be removed
     */
    static List<String> sweep(Path tmp, Path shm) {
        List<String> warnings = new ArrayList<>();
        try (DirectoryStream<Path> dirs = Files.newDirectoryStream(tmp, CACHE_PREFIX + "*")) {
            for (Path dir : dirs) {
                if (Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS) && stale(dir)) {
                    deleteTree(dir, warnings);
                }
            }
        } catch (IOException | RuntimeException e) {
            warnings.add("cannot look for stale cache folders in " + tmp + ": " + e.getMessage());
        }
        if (Files.isDirectory(shm)) {
            try (DirectoryStream<Path> files = Files.newDirectoryStream(shm, INFLIGHT_PREFIX + "*")) {
                for (Path file : files) {
                    if (olderThan(file, UNLOCKED_GRACE)) {
                        Files.deleteIfExists(file);
                    }
                }
            } catch (IOException | RuntimeException e) {
                warnings.add("cannot remove stale inflight files in " + shm + ": " + e.getMessage());
            }
        }
        return warnings;
    }

    /** Whether no live process owns {@code dir}. */
    static boolean stale(Path dir) throws IOException {
        long owner = pidOf(dir.getFileName().toString());
        if (owner == ProcessHandle.current().pid()) {
            // Ours. (Not probed with a second channel: closing it would drop this process's lock, POSIX locks
            // belonging to the process and not to the descriptor.)
            return false;
        }
        Path lockFile = dir.resolve(LOCK);
        if (Files.isRegularFile(lockFile, LinkOption.NOFOLLOW_LINKS)) {
            try (FileChannel ch = FileChannel.open(lockFile, StandardOpenOption.WRITE)) {
                FileLock lock = ch.tryLock();
                if (lock == null) {
                    return false; // another process holds it: alive
                }
                lock.release();
                // Unlocked: its owner is dead, or created the file an instant ago and is about to lock it.
                return owner <= 0 || ProcessHandle.of(owner).isEmpty() || olderThan(dir, UNLOCKED_GRACE);
            } catch (OverlappingFileLockException e) {
                return false; // this very process holds it (a folder renamed from another pid)
            }
        }
        // No lock file: only a folder named after a dead process, and not just created.
        return owner > 0 && ProcessHandle.of(owner).isEmpty() && olderThan(dir, UNLOCKED_GRACE);
    }

    /** The process id in {@code kickplug-felix-PID-RANDOM}, or -1. */
    static long pidOf(String name) {
        if (!name.startsWith(CACHE_PREFIX)) {
            return -1;
        }
        String rest = name.substring(CACHE_PREFIX.length());
        int dash = rest.indexOf('-');
        if (dash <= 0) {
            return -1;
        }
        try {
            return Long.parseLong(rest.substring(0, dash));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static boolean olderThan(Path p, Duration age) throws IOException {
        FileTime modified = Files.getLastModifiedTime(p, LinkOption.NOFOLLOW_LINKS);
        return modified.toInstant().isBefore(Instant.now().minus(age));
    }

    private static void deleteTree(Path root, List<String> warnings) {
        try {
            FileTree.delete(root);
        } catch (IOException | UncheckedIOException e) {
            warnings.add("could not remove the stale cache folder " + root + ": " + e.getMessage());
        }
    }
}
