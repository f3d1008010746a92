package io.kickplug.guest.engine;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

/**
 * Pins the calling thread to host CPUs (Linux only): its thread id comes from {@code /proc/thread-self}, and
 * util-linux's {@code taskset -p} sets the affinity of that one thread, which the JDK cannot do by itself.
 *
 * <p>Used by {@link VirtualTime}: its actors run one at a time, handing a baton over, so one core loses them
 * nothing, while actors spread over cores pay a cross-core wake-up and cold caches on every hand-over, and that
 * cost, which depends on where the host scheduler happened to put each thread, lands in the measured CPU time.
 */
public final class CpuPinning {

    private static final Path STATUS = Path.of("/proc/self/status");
    private static final Path THREAD_SELF = Path.of("/proc/thread-self");

    private CpuPinning() {
    }

    /**
     * The CPUs of a Linux CPU list ({@code "0-3,8,10-11"}, as in {@code Cpus_allowed_list} and taskset).
     *
     * @throws IllegalArgumentException naming the bad part
     */
    public static BitSet parseList(String list) {
        BitSet cpus = new BitSet();
        String s = list.trim();
        if (s.isEmpty()) {
            throw new IllegalArgumentException("empty CPU list");
        }
        for (String part : s.split(",")) {
            String p = part.trim();
            int dash = p.indexOf('-');
            try {
                int lo = Integer.parseInt(dash < 0 ? p : p.substring(0, dash));
                int hi = dash < 0 ? lo : Integer.parseInt(p.substring(dash + 1));
                if (lo < 0 || hi < lo || hi > 65_535) {
                    throw new IllegalArgumentException("bad CPU range '" + p + "' in CPU list '" + s + "'");
                }
                cpus.set(lo, hi + 1);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("bad CPU '" + p + "' in CPU list '" + s + "'", e);
            }
        }
        return cpus;
    }

    /** This process's allowed CPUs ({@code Cpus_allowed_list}), or {@code null} where there is no procfs. */
    public static String allowedList() {
        return cpusAllowed(STATUS);
    }

    /** The highest CPU this process may run on, or -1 when unknown: where {@code auto} pins virtual time. */
    public static int lastAllowedCpu() {
        String list = allowedList();
        if (list == null) {
            return -1;
        }
        try {
            return parseList(list).length() - 1;
        } catch (IllegalArgumentException e) {
            return -1;
        }
    }

    /** The calling thread's allowed CPUs ({@code Cpus_allowed_list} of {@code /proc/thread-self}), or null. */
    public static String currentThreadAllowedList() {
        return cpusAllowed(THREAD_SELF.resolve("status"));
    }

    private static String cpusAllowed(Path status) {
        try {
            for (String line : Files.readAllLines(status)) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            return null;
        }
        return null;
    }

    /** The calling thread's kernel thread id, or -1 where there is no {@code /proc/thread-self}. */
    static long currentTid() {
        try {
            // "<pid>/task/<tid>"
            String target = Files.readSymbolicLink(THREAD_SELF).toString();
            return Long.parseLong(target.substring(target.lastIndexOf('/') + 1));
        } catch (IOException | RuntimeException e) {
            return -1;
        }
    }

    /**
     * Keeps {@code actorCpus} for the threads that pin themselves there: every thread of this process moves to
     * the other CPUs it may use (taskset -a); threads created afterwards inherit that from their creator.
     *
     * @return what gives the process its CPUs back, or null when nothing was reserved (no other CPU to move to,
     *     or taskset failed)
     */
    public static Reservation reserve(String actorCpus) {
        String all = allowedList();
        BitSet rest = all == null ? null : others(all, actorCpus);
        if (rest == null) {
            return null;
        }
        String others = rest.stream().mapToObj(Integer::toString).collect(Collectors.joining(","));
        return taskset("-a", "-p", "-c", others, Long.toString(ProcessHandle.current().pid()))
                ? new Reservation(all) : null;
    }

    /** Whether the process may use a CPU outside {@code actorCpus}, for its other threads. */
    public static boolean leavesOthers(String actorCpus) {
        String all = allowedList();
        return all != null && others(all, actorCpus) != null;
    }

    /** The CPUs of {@code all} outside {@code actorCpus}, or null when there are none. */
    private static BitSet others(String all, String actorCpus) {
        BitSet rest = parseList(all);
        rest.andNot(parseList(actorCpus));
        return rest.isEmpty() ? null : rest;
    }

    /** A {@link #reserve} in force; {@link #close} gives every thread of the process the original CPUs again. */
    public static final class Reservation implements AutoCloseable {
        private final String original;

        private Reservation(String original) {
            this.original = original;
        }

        @Override
        public void close() {
            taskset("-a", "-p", "-c", original, Long.toString(ProcessHandle.current().pid()));
        }
    }

    /** Whether threads can be pinned here: sets the calling thread's affinity to what it already is. */
    public static boolean works() {
        String own = currentThreadAllowedList();
        return own != null && pinCurrentThread(own);
    }

    /**
     * Sets the calling thread's CPU affinity to {@code cpuList}.
     *
     * @return whether it took effect (false without procfs or taskset, or when the kernel refused the list)
     */
    public static boolean pinCurrentThread(String cpuList) {
        long tid = currentTid();
        if (tid < 0) {
            return false;
        }
        return taskset("-p", "-c", cpuList, Long.toString(tid));
    }

    private static boolean taskset(String... args) {
        String[] command = new String[args.length + 1];
        command[0] = "taskset";
        System.arraycopy(args, 0, command, 1, args.length);
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true)
                    .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            if (!p.waitFor(10, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return false;
            }
            return p.exitValue() == 0;
        } catch (IOException e) {
            return false;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }
}
