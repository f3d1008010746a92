package io.kickplug.vhost.testsupport;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.stream.Stream;

/**
 * What this process holds, read from /proc/self: memory mappings of a file, open descriptors, threads and the
 * resident set size. Linux only.
 */
public record Footprint(long mappings, long fds, long threads, long rssKiB) {

    /** Now, counting the mappings whose path contains {@code mappedPath} (null: all mappings). */
    public static Footprint now(String mappedPath) {
        return new Footprint(countMappings(mappedPath), countFds(), countThreads(), readRssKiB());
    }

    /** Lines of /proc/self/maps whose path contains {@code needle} (every line for {@code null}). */
    public static long countMappings(String needle) {
        try {
            List<String> lines = Files.readAllLines(Path.of("/proc/self/maps"));
            return needle == null ? lines.size() : lines.stream().filter(l -> l.contains(needle)).count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Open descriptors (entries of /proc/self/fd, the listing's own descriptor excluded). */
    public static long countFds() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count() - 1;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Threads of the process (entries of /proc/self/task). */
    public static long countThreads() {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/task"))) {
            return s.count();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** VmRSS of /proc/self/status in KiB. */
    public static long readRssKiB() {
        return readStatusKiB("VmRSS");
    }

    /** A KiB field of /proc/self/status: VmRSS, RssAnon, RssFile, RssShmem. */
    public static long readStatusKiB(String field) {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
                if (line.startsWith(field + ":")) {
                    return Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
            throw new IllegalStateException("no " + field + " in /proc/self/status");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
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

    @Override
    public String toString() {
        return String.format("mappings %d, fds %d, threads %d, RSS %d KiB", mappings, fds, threads, rssKiB);
    }
}
