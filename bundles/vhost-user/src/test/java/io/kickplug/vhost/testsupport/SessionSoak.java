package io.kickplug.vhost.testsupport;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * A soak of vhost-user sessions against one export: each session connects, negotiates, maps guest memory (a
 * fresh /dev/shm file, as QEMU's memfd), runs write-read-verify I/O on two queues and ends in one of four
 * ways chosen at random. After each session the back-end must be back where it started: no mapping of that
 * session's memory (within 1 s, no GC requested), as many descriptors and Java threads as before the first
 * session. The resident set size is taken after session 10 and at the end.
 *
 * <p>Used by {@code SessionSoakTest}; the front-end runs in this JVM, which is also the back-end's process
 * (the client unmaps its own view of guest memory at close, so the mapping count is the back-end's).
 */
public final class SessionSoak {

    /** How a session ends. */
    public enum Ending {
        /** GET_VRING_BASE on both queues, then the socket is closed (QEMU's shutdown). */
        CLEAN_CLOSE,
        /** RESET_OWNER, then the socket is closed. */
        RESET_OWNER,
        /** The socket is closed with both queues running and nothing said: a killed front-end. */
        FRONTEND_KILLED,
        /** Requests are put on both queues and the socket is closed without waiting for them. */
        MID_IO_DISCONNECT
    }

    /**
     * What the back-end's process holds: descriptors (a count, for the report; leaks are checked by what each
     * descriptor refers to, {@link Footprint#openedSince}), threads (in this process: all Java threads; in another:
     * those whose kernel name starts with {@value #VHOST_THREADS}), process threads (tasks), the resident set,
     * and, in this process, the Java heap (-1 otherwise).
     */
    public record Sample(long fds, long threads, long tasks, long rssKiB, long shmemKiB, long heapUsedKiB,
            long heapCommittedKiB) {
        static Sample of(Footprint target) {
            if (target == Footprint.SELF) {
                MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
                return new Sample(target.fds(), ManagementFactory.getThreadMXBean().getThreadCount(),
                        target.threads(), target.statusKiB("VmRSS"), target.statusKiB("RssShmem"),
                        heap.getUsed() >> 10, heap.getCommitted() >> 10);
            }
            return new Sample(target.fds(), target.threadsNamed(VHOST_THREADS), target.threads(),
                    target.statusKiB("VmRSS"), target.statusKiB("RssShmem"), -1, -1);
        }

        @Override
        public String toString() {
            return String.format("fds %d, threads %d, tasks %d, RSS %d KiB (shmem %d KiB; heap used %d KiB,"
                    + " committed %d KiB)", fds, threads, tasks, rssKiB, shmemKiB, heapUsedKiB, heapCommittedKiB);
        }
    }

    /** A finished soak. {@code mappingsLeft} counts mappings of ended sessions' memory left at the end. */
    public record Result(int sessions, long seed, Sample baseline, Sample after10, Sample end, long mappingsLeft,
            List<String> fdsOpened, Map<Ending, Integer> endings, long millis) {

        /** The report line pairs: baseline vs end. */
        public String report() {
            return String.format("sessions %d (seed %d, %d ms): endings %s%n"
                    + "  mappings of ended sessions' memory: %d%n"
                    + "  descriptors opened since the baseline and still open: %s%n"
                    + "  baseline: %s%n  after 10: %s%n  end:      %s", sessions, seed, millis, endings,
                    mappingsLeft, fdsOpened, baseline, after10, end);
        }
    }

    /** Kernel name prefix of the back-end's vhost-user threads (accept, session, kick), cut to 15 characters. */
    public static final String VHOST_THREADS = "kickplug-vhost-";
    /** How long a session's mappings may take to disappear (the acceptance). */
    public static final long RELEASE_MILLIS = 1000;
    private static final long SETTLE_MILLIS = 5000;

    private final Path socket;
    private final Path shmDir;
    private final long memoryBytes;
    private final long seed;
    private final Random random;
    /** The back-end's process. */
    private final Footprint target;

    /**
     * @param socket the export's socket
     * @param shmDir where guest memory files go (/dev/shm)
     * @param memoryBytes guest memory per session
     * @param backendPid the back-end's process, or 0 for this one
     */
    public SessionSoak(Path socket, Path shmDir, long memoryBytes, long seed, long backendPid) {
        this.target = Footprint.of(backendPid);
        this.socket = socket;
        this.shmDir = shmDir;
        this.memoryBytes = memoryBytes;
        this.seed = seed;
        this.random = new Random(seed);
    }

    /**
     * Runs one warm-up session (class loading, lazily opened JDK descriptors), takes the baseline, then runs
     * {@code sessions} sessions, checking after each one.
     *
     * @param serverIdle waits until the export has no front-end (the session's clean-up has run)
     * @throws AssertionError at the first session that leaves something behind
     */
    public Result run(int sessions, IdleWait serverIdle, Consumer<String> progress) throws Exception {
        long started = System.nanoTime();
        session(-1, Ending.CLEAN_CLOSE, serverIdle);
        // The warm-up's own threads (the client's call readers end when their pipes close) must be gone.
        if (!Footprint.await(() -> sessionThreads() == 0, SETTLE_MILLIS)) {
            throw new AssertionError("the warm-up session's threads did not end: " + sessionThreadNames());
        }
        Sample baseline = Sample.of(target);
        Map<String, String> baselineFds = target.fdTargets();
        Sample after10 = null;
        Map<Ending, Integer> endings = new EnumMap<>(Ending.class);
        List<String> names = new ArrayList<>();
        for (int i = 0; i < sessions; i++) {
            Ending ending = Ending.values()[random.nextInt(Ending.values().length)];
            endings.merge(ending, 1, Integer::sum);
            String name = session(i, ending, serverIdle);
            names.add(name);
            if (!Footprint.await(() -> target.mappings(name) == 0, RELEASE_MILLIS)) {
                throw new AssertionError("session " + i + " (" + ending + "): " + target.mappings(name)
                        + " mappings of its memory left after " + RELEASE_MILLIS + " ms");
            }
            // Descriptors the session opened, not the count: one open before the baseline may close meanwhile.
            if (!Footprint.await(() -> target.openedSince(baselineFds).isEmpty(), SETTLE_MILLIS)) {
                throw new AssertionError("session " + i + " (" + ending + "): descriptors opened since the"
                        + " baseline still open: " + target.openedSince(baselineFds));
            }
            if (!Footprint.await(() -> Sample.of(target).threads() == baseline.threads(), SETTLE_MILLIS)) {
                throw new AssertionError("session " + i + " (" + ending + "): " + Sample.of(target).threads()
                        + " threads, baseline " + baseline.threads());
            }
            if (i == 9) {
                after10 = Sample.of(target);
            }
            if ((i + 1) % 100 == 0) {
                progress.accept("session " + (i + 1) + ": " + Sample.of(target));
            }
        }
        long left = 0;
        for (String name : names) {
            left += target.mappings(name);
        }
        Sample end = Sample.of(target);
        return new Result(sessions, seed, baseline, after10 == null ? end : after10, end, left,
                target.openedSince(baselineFds),
                endings, TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started));
    }

    /**
     * A sector among 32 fixed 4 KiB blocks: the disk is an in-memory backend that allocates as it is written, so
     * writes spread over the whole disk would grow the process by the disk's data, which is not what is measured.
     */
    private long sector() {
        return 8L * random.nextInt(32);
    }

    /** Live threads of a session: the back-end's session and kick threads, the client's call readers. */
    static List<String> sessionThreadNames() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(n -> n.startsWith("test-call-reader-") || n.matches("kickplug-vhost-.*-(session\\d+|kick)"))
                .sorted().toList();
    }

    static long sessionThreads() {
        return Thread.getAllStackTraces().keySet().stream().map(Thread::getName)
                .filter(n -> n.startsWith("test-call-reader-") || n.matches("kickplug-vhost-.*-(session\\d+|kick)"))
                .count();
    }

    /** Waits until the export serves no front-end. */
    @FunctionalInterface
    public interface IdleWait {
        boolean await(long timeout, TimeUnit unit) throws InterruptedException;
    }

    private String session(int i, Ending ending, IdleWait serverIdle) throws Exception {
        String name = "kickplug-soak-ram-" + ProcessHandle.current().pid() + "-" + seed + "-" + i;
        long features = VirtioFeatures.RING_INDIRECT_DESC | VirtioBlk.F_MQ | VirtioBlk.F_FLUSH
                | (random.nextBoolean() ? VirtioFeatures.RING_EVENT_IDX : 0);
        try (FrontendClient client = new FrontendClient(socket, shmDir.resolve(name), memoryBytes)) {
            client.negotiate(features);
            Queue q0 = client.startQueue(0, 0, false);
            Queue q1 = client.startQueue(1, 0, false);
            int rounds = 1 + random.nextInt(3);
            for (int r = 0; r < rounds; r++) {
                client.writeReadVerify(q0, sector(), (byte) random.nextInt(), true);
                client.writeReadVerify(q1, sector(), (byte) random.nextInt(), true);
            }
            switch (ending) {
                case CLEAN_CLOSE -> {
                    client.stopQueue(0);
                    client.stopQueue(1);
                }
                case RESET_OWNER -> {
                    if (client.sendAck(VhostUser.RESET_OWNER, new byte[0]) != 0) {
                        throw new AssertionError("session " + i + ": RESET_OWNER refused");
                    }
                }
                case FRONTEND_KILLED -> {
                    // nothing: the socket closes with the queues running
                }
                case MID_IO_DISCONNECT -> {
                    int n = 1 + random.nextInt(8);
                    for (int k = 0; k < n; k++) {
                        client.submit(k % 2 == 0 ? q0 : q1, 2 + k, k % 3 == 0 ? VirtioBlk.T_IN : VirtioBlk.T_OUT,
                                sector(), 4096);
                    }
                }
            }
        }
        if (!serverIdle.await(10, TimeUnit.SECONDS)) {
            throw new AssertionError("session " + i + " (" + ending + "): the export still serves it after 10 s");
        }
        return name;
    }
}
