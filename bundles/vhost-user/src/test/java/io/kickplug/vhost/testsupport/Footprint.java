package io.kickplug.vhost.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * What a process holds, read from /proc/PID (this process: /proc/self): memory mappings of a file, open
 * descriptors, threads and the resident set size. Linux only.
 */
public final class Footprint {

    /** This process. */
    public static final Footprint SELF = new Footprint(Path.of("/proc/self"));

    private final Path proc;

    private Footprint(Path proc) {
        this.proc = proc;
    }

    /** Process {@code pid}; 0 or this process's id: {@link #SELF}. */
    public static Footprint of(long pid) {
        return pid <= 0 || pid == ProcessHandle.current().pid() ? SELF : new Footprint(Path.of("/proc/" + pid));
    }

    /** Lines of maps whose path contains {@code needle} (every line for {@code null}). */
    public long mappings(String needle) {
        try {
            List<String> lines = Files.readAllLines(proc.resolve("maps"));
            return needle == null ? lines.size() : lines.stream().filter(l -> l.contains(needle)).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Open descriptors (entries of fd; for this process the listing's own descriptor excluded). */
    public long fds() {
        try (Stream<Path> s = Files.list(proc.resolve("fd"))) {
            return s.count() - (this == SELF ? 1 : 0);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The open descriptors by number with what each refers to ({@code socket:[inode]}, a path, ...), without the
     * listing's own descriptor. A leak check compares two of these with {@link #openedSince}: a count alone
     * also moves when a descriptor opened before the check (another test class's stream, closed by its
     * cleaner after a GC) is closed meanwhile, which is not a leak of what the check watches.
     */
    public Map<String, String> fdTargets() {
        Path dir = proc.resolve("fd");
        Map<String, String> targets = new HashMap<>();
        try (Stream<Path> s = Files.list(dir)) {
            s.forEach(fd -> {
                try {
                    String target = Files.readSymbolicLink(fd).toString();
                    if (!(this == SELF && target.endsWith("/fd"))) { // the listing's own directory descriptor
                        targets.put(fd.getFileName().toString(), target);
                    }
                } catch (IOException closedMeanwhile) {
                    // closed between the listing and the read: not open
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return targets;
    }

    /** Descriptors open now that were not open, to the same target, in {@code before} ("7 -> socket:[123]"). */
    public List<String> openedSince(Map<String, String> before) {
        List<String> opened = new ArrayList<>();
        fdTargets().forEach((fd, target) -> {
            if (!target.equals(before.get(fd))) {
                opened.add(fd + " -> " + target);
            }
        });
        return opened;
    }

    /** Threads of the process (entries of task). */
    public long threads() {
        try (Stream<Path> s = Files.list(proc.resolve("task"))) {
            return s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Threads whose kernel name (a Java thread's name cut to 15 characters) starts with {@code prefix}. */
    public long threadsNamed(String prefix) {
        try (Stream<Path> s = Files.list(proc.resolve("task"))) {
            return s.filter(t -> {
                try {
                    return Files.readString(t.resolve("comm")).startsWith(prefix);
                } catch (IOException gone) {
                    return false; // the thread ended while we looked
                }
            }).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A KiB field of status: VmRSS, RssAnon, RssFile, RssShmem. */
    public long statusKiB(String field) {
        try {
            for (String line : Files.readAllLines(proc.resolve("status"))) {
                if (line.startsWith(field + ":")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
            throw new IllegalStateException("no " + field + " in " + proc.resolve("status"));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Lines of /proc/self/maps whose path contains {@code needle}. */
    public static long countMappings(String needle) {
        return SELF.mappings(needle);
    }

    /** Threads of this process. */
    public static long countThreads() {
        return SELF.threads();
    }

    /** VmRSS of this process in KiB. */
    public static long readRssKiB() {
        return SELF.statusKiB("VmRSS");
    }

    /** A KiB field of /proc/self/status. */
    public static long readStatusKiB(String field) {
        return SELF.statusKiB(field);
    }

    /** Polls {@code condition} every 5 ms until it holds or {@code timeoutMillis} passed; returns its last value. */
    public static boolean await(BooleanSupplier condition, long timeoutMillis) throws InterruptedException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                return condition.getAsBoolean();
            }
            Thread.sleep(5);
        }
        return true;
    }
}
