package io.kickplug.guest.bench;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.command.OptionTable;
import io.kickplug.api.guest.OptionArgs;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStats;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.GuestEngine;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.guest.fio.FioRunner;
import io.kickplug.guest.fio.FioValues;
import io.kickplug.guest.fio.JobFileParser;
import io.kickplug.guest.fio.JobResult;
import io.kickplug.guest.fio.JobSpec;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * {@code kp:bench kick}: seed 000's experiment. Its fio job file (randread 4k, iodepth 64, numjobs 4, libaio)
 * runs unchanged, made time-based for the runtime asked, on 4 vCPUs against a temporary memory disk with one
 * virtqueue and EVENT_IDX, once with the {@code under-lock} and once with the {@code outside-lock} kick
 * policy at each exit latency. For every run it reports IOPS, notifies and interrupts per request, and the vq
 * lock's lock statistics; per exit latency the IOPS ratio outside/under.
 *
 * <p>A warm-up run per policy (up to {@value #MAX_WARMUP_NANOS} ns each) comes first and is discarded: the
 * first runs would otherwise pay for the JIT compilation of the I/O path and of each policy. The two policies run in alternating
 * order (under first at the first exit latency, outside first at the second, ...), so a drift of the host
 * does not always favour the same one. The lock statistics are reset before each run (as
 * {@code kp:lockstat --reset}), so afterwards {@code kp:lockstat} shows the last run. The disk is attached
 * for the benchmark and detached after it.
 */
public final class KickBench {

    public static final List<Long> DEFAULT_EXIT_US = List.of(1L, 10L, 50L);
    /** The seed's timeout=10. */
    public static final long DEFAULT_RUNTIME_NANOS = 10_000_000_000L;
    public static final long DEFAULT_DISK_BYTES = 1L << 30;
    /** Seed 000: "arm64 quad core VM". */
    public static final int VCPUS = 4;
    /** The 3.15 driver has one virtqueue (vblk->vq). */
    public static final int QUEUES = 1;
    public static final List<String> POLICIES = List.of("under-lock", "outside-lock");
    static final String SEED_RESOURCE = "seed000.fio";
    /** Longest warm-up run (JIT compilation of the whole I/O path), whose figures are discarded. */
    static final long MAX_WARMUP_NANOS = 2_000_000_000L;
    static final String DISK_PREFIX = "bench-kick";

    /**
     * @param runtimeNanos per run
     * @param exitNanos the exit latencies, one pair of runs each
     * @param transport the disk's transport
     */
    public record Options(long runtimeNanos, List<Long> exitNanos, long diskBytes, TransportKind transport) {

        public Options {
            exitNanos = List.copyOf(exitNanos);
            Objects.requireNonNull(transport, "transport");
        }

        /** The options {@link #parse} takes, for its messages and the command reference. */
        public static final OptionTable TABLE = new OptionTable("kick [options]", "seed 000: the seed's fio job on "
                + VCPUS + " vCPUs against a temporary memory disk, once with the under-lock and once with the "
                + "outside-lock kick policy at each exit latency; IOPS, notifies and interrupts per request and the vq "
                + "lock's statistics, and the IOPS ratio outside/under",
                OptionTable.Option.valued("--runtime", "S", DEFAULT_RUNTIME_NANOS / 1_000_000_000L + "s",
                        "runtime of each run: seconds, or with fio's suffixes (500ms, 2m)"),
                OptionTable.Option.valued("--exit-us", "LIST", DEFAULT_EXIT_US.stream().map(String::valueOf)
                        .collect(java.util.stream.Collectors.joining(",")), "exit (notify) latencies in "
                        + "microseconds, comma-separated: one pair of runs each"),
                OptionTable.Option.valued("--disk-size", "SIZE", (DEFAULT_DISK_BYTES >> 30) + "G",
                        "size of the temporary memory disk, a multiple of 512 of at least 1 MiB (4k, 64M, 1G)"),
                OptionTable.Option.valued("--transport", "mmio|pci", "mmio", "the disk's transport"));

        public static Options defaults() {
            return new Options(DEFAULT_RUNTIME_NANOS, DEFAULT_EXIT_US.stream().map(us -> us * 1000).toList(),
                    DEFAULT_DISK_BYTES, TransportKind.MMIO);
        }

        /**
         * Parses {@code [--runtime S] [--exit-us 1,10,50] [--disk-size SIZE] [--transport mmio|pci]}, each as
         * "--name value" or "--name=value".
         *
         * @throws IllegalArgumentException with one line naming the bad argument
         */
        public static Options parse(List<String> args) {
            Options o = defaults();
            long runtime = o.runtimeNanos();
            List<Long> exits = o.exitNanos();
            long disk = o.diskBytes();
            TransportKind transport = o.transport();
            for (Map.Entry<String, String> option : OptionArgs.parse(args, TABLE.expected()).entrySet()) {
                String name = option.getKey();
                String value = option.getValue();
                if (!TABLE.has(name)) {
                    throw TABLE.unknown(name);
                }
                switch (name) {
                    case "--runtime" -> {
                        runtime = FioValues.timeNanos("--runtime", value);
                        if (runtime <= 0) {
                            throw new IllegalArgumentException("--runtime must be positive: " + value);
                        }
                    }
                    case "--exit-us" -> exits = exitList(value);
                    case "--disk-size" -> {
                        disk = FioValues.size("--disk-size", value);
                        if (disk < 1L << 20 || disk % 512 != 0) {
                            throw new IllegalArgumentException("--disk-size " + value
                                    + " must be a multiple of 512 of at least 1 MiB");
                        }
                    }
                    case "--transport" -> {
                        transport = TransportKind.parse(value == null ? "" : value.trim());
                        if (transport == TransportKind.VHOST_USER) {
                            throw new IllegalArgumentException("--transport must be mmio or pci (the simulated guest "
                                    + "drives the disk in-process)");
                        }
                    }
                    default -> throw TABLE.unknown(name);
                }
            }
            return new Options(runtime, exits, disk, transport);
        }

        private static List<Long> exitList(String text) {
            List<Long> exits = new ArrayList<>();
            for (String part : (text == null ? "" : text).split(",", -1)) {
                String p = part.trim();
                if (p.isEmpty() || p.length() > 9 || !p.chars().allMatch(Character::isDigit)) {
                    throw new IllegalArgumentException("invalid --exit-us '" + text
                            + "': expected microseconds separated by commas, e.g. 1,10,50");
                }
                exits.add(Long.parseLong(p) * 1000);
            }
            return exits;
        }
    }

    /**
     * One run.
     *
     * @param ios requests completed
     * @param notifies notify writes (VM exits) during the run
     * @param interrupts interrupts that found completions during the run
     * @param locks the vq locks' statistics of this run
     */
    public record Run(long exitNanos, String policy, double iops, long ios, long notifies, long interrupts,
            List<LockStatRow> locks) {

        public Run {
            locks = List.copyOf(locks);
        }

        public double notifiesPerRequest() {
            return ios == 0 ? 0 : (double) notifies / ios;
        }

        public double interruptsPerRequest() {
            return ios == 0 ? 0 : (double) interrupts / ios;
        }

        /** Largest hold time over the vq locks, ns. */
        public long holdMaxNs() {
            return locks.stream().mapToLong(LockStatRow::holdtimeMaxNs).max().orElse(0);
        }

        public long waitTotalNs() {
            return locks.stream().mapToLong(LockStatRow::waittimeTotalNs).sum();
        }

        public long waitMaxNs() {
            return locks.stream().mapToLong(LockStatRow::waittimeMaxNs).max().orElse(0);
        }

        public long contentions() {
            return locks.stream().mapToLong(LockStatRow::contentions).sum();
        }
    }

    /** The whole benchmark: what ran where, and every run in order. */
    public record Result(Options options, DiskInfo disk, long warmupNanos, long injectNanos, boolean eventIdx,
            List<Run> runs) {

        public Result {
            runs = List.copyOf(runs);
        }

        /** IOPS outside-lock / under-lock at {@code exitNanos}, or NaN when either is missing. */
        public double ratio(long exitNanos) {
            double under = iops(exitNanos, POLICIES.get(0));
            double outside = iops(exitNanos, POLICIES.get(1));
            return under > 0 && outside >= 0 ? outside / under : Double.NaN;
        }

        private double iops(long exitNanos, String policy) {
            return runs.stream().filter(r -> r.exitNanos() == exitNanos && r.policy().equals(policy))
                    .mapToDouble(Run::iops).findFirst().orElse(-1);
        }
    }

    private final DiskManager disks;
    private final VirtqueueFactory virtqueues;
    private final GuestEngine engine;
    private final LockStats lockStats;

    public KickBench(DiskManager disks, VirtqueueFactory virtqueues, GuestEngine engine, LockStats lockStats) {
        this.disks = Objects.requireNonNull(disks, "disks");
        this.virtqueues = Objects.requireNonNull(virtqueues, "virtqueues");
        this.engine = Objects.requireNonNull(engine, "engine");
        this.lockStats = Objects.requireNonNull(lockStats, "lockStats");
    }

    /** Seed 000's job file, verbatim. */
    public static String seedJobFile() {
        try (InputStream in = KickBench.class.getResourceAsStream(SEED_RESOURCE)) {
            if (in == null) {
                throw new IllegalStateException("resource " + SEED_RESOURCE + " is missing from the guest bundle");
            }
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * The seed's jobs with the runtime made exact: {@code runtime} and {@code time_based} appended to its one
     * job section (the seed's disk was large enough that its 10 s never covered it; a memory disk is not).
     */
    public static List<JobSpec> jobs(long runtimeNanos) {
        String text = seedJobFile();
        if (!text.endsWith("\n")) {
            text += "\n";
        }
        return JobFileParser.parse(text + "runtime=" + Math.max(1, runtimeNanos / 1000) + "us\ntime_based\n");
    }

    /** Attaches the disk, runs every exit latency with both policies, detaches the disk. */
    public Result run(Options o) {
        List<JobSpec> jobs = jobs(o.runtimeNanos());
        String name = freeDiskName();
        DiskInfo disk = disks.attach(DiskSpec.memory(name, o.diskBytes()).withTransport(o.transport())
                .withQueues(QUEUES, DiskSpec.DEFAULT_QUEUE_SIZE));
        try {
            MachineConfig base = engine.defaults(name).withVcpus(VCPUS);
            long warmup = Math.min(o.runtimeNanos(), MAX_WARMUP_NANOS);
            for (String policy : POLICIES) {
                run(name, jobs(warmup), base.withLatencies(o.exitNanos().get(0), base.injectLatencyNs())
                        .withKickPolicy(policy));
            }
            List<Run> runs = new ArrayList<>();
            boolean eventIdx = true;
            for (int i = 0; i < o.exitNanos().size(); i++) {
                long exit = o.exitNanos().get(i);
                List<String> order = i % 2 == 0 ? POLICIES : List.of(POLICIES.get(1), POLICIES.get(0));
                for (String policy : order) {
                    MachineConfig config = base.withLatencies(exit, base.injectLatencyNs()).withKickPolicy(policy);
                    Measured r = run(name, jobs, config);
                    eventIdx &= r.eventIdx();
                    runs.add(r.run());
                }
            }
            return new Result(o, disk, warmup, base.injectLatencyNs(), eventIdx, runs);
        } finally {
            disks.detach(name);
        }
    }

    private record Measured(Run run, boolean eventIdx) {
    }

    /** One run: lock statistics reset, a fresh machine, the jobs, the vq locks' rows. */
    private Measured run(String disk, List<JobSpec> jobs, MachineConfig config) {
        lockStats.reset();
        FioReport report;
        boolean eventIdx;
        try (GuestMachine machine = engine.boot(disks.port(disk), virtqueues, config)) {
            eventIdx = (machine.features() & VirtioFeatures.RING_EVENT_IDX) != 0;
            report = FioRunner.run(machine, disk, jobs);
        }
        if (report.failed()) {
            throw new IllegalStateException("benchmark run (exit " + config.exitLatencyNs() / 1000 + " us, "
                    + config.kickPolicy() + ") failed: " + String.join("; ", report.errorLines()));
        }
        JobResult all = JobResult.merge(report.jobs());
        long ios = all.read().ios() + all.write().ios();
        double iops = all.runtimeNanos() == 0 ? 0 : ios * 1e9 / all.runtimeNanos();
        List<LockStatRow> locks = lockStats.rows().stream().filter(r -> r.name().startsWith(disk + " vq")).toList();
        return new Measured(new Run(config.exitLatencyNs(), config.kickPolicy(), iops, ios, report.guest().notifies(),
                report.guest().interrupts(), locks), eventIdx);
    }

    private String freeDiskName() {
        Set<String> taken = new HashSet<>();
        disks.list().forEach(d -> taken.add(d.name()));
        String name = DISK_PREFIX;
        for (int i = 2; taken.contains(name); i++) {
            name = DISK_PREFIX + "-" + i;
        }
        return name;
    }

    /** The report: what ran, one block per exit latency, and a summary table. */
    public static String format(Result r) {
        StringBuilder out = new StringBuilder();
        Options o = r.options();
        DiskInfo d = r.disk();
        out.append("kp:bench kick: seed 000, Linux e8edca6f \"virtio_blk: dont hold spin lock during world switch\"\n");
        out.append(String.format(Locale.ROOT, "workload: seed000.fio unchanged (randread, bs 4k, iodepth 64, numjobs 4,"
                + " libaio, direct) + runtime=%s time_based%n", seconds(o.runtimeNanos())));
        out.append(String.format(Locale.ROOT, "guest: %d vCPUs, kick policies %s, injection latency %s us, EVENT_IDX %s%n",
                VCPUS, String.join(" vs ", POLICIES), micros(r.injectNanos()), r.eventIdx() ? "on" : "OFF"));
        out.append(String.format(Locale.ROOT, "disk: %s, %s memory, %s, %d queue of %d, %d I/O thread (attached for "
                + "the benchmark)%n", d.name(), size(d.sizeBytes()), d.transport().label(), d.numQueues(),
                d.queueSize(), d.ioThreads()));
        out.append(String.format(Locale.ROOT, "runs: %s warm-up per policy discarded, then each exit latency with"
                + " both policies in alternating order%n", seconds(r.warmupNanos())));
        out.append("lock statistics: reset before each run (kp:lockstat shows the last run); times in us\n");
        String header = String.format(Locale.ROOT, "  %-13s %10s %12s %10s %12s %14s %12s %14s %12s%n", "policy", "IOPS",
                "notifies/req", "irqs/req", "hold-max", "hold-total", "wait-max", "wait-total", "contentions");
        for (long exit : o.exitNanos()) {
            out.append(String.format(Locale.ROOT, "%nexit latency %s us, injection latency %s us%n", micros(exit),
                    micros(r.injectNanos())));
            out.append(header);
            for (Run run : r.runs()) {
                if (run.exitNanos() != exit) {
                    continue;
                }
                long holdTotal = run.locks().stream().mapToLong(LockStatRow::holdtimeTotalNs).sum();
                out.append(String.format(Locale.ROOT, "  %-13s %10.0f %12.4f %10.4f %12s %14s %12s %14s %12d%n",
                        run.policy(), run.iops(), run.notifiesPerRequest(), run.interruptsPerRequest(),
                        micros(run.holdMaxNs()), micros(holdTotal), micros(run.waitMaxNs()), micros(run.waitTotalNs()),
                        run.contentions()));
            }
            out.append(String.format(Locale.ROOT, "  IOPS outside-lock / under-lock: %.2f%n", r.ratio(exit)));
        }
        out.append(String.format(Locale.ROOT, "%nsummary%n  %8s %12s %12s %8s %16s %16s %16s %16s%n", "exit us",
                "under IOPS", "outside IOPS", "ratio", "under hold-max", "outside hold-max", "under wait-tot",
                "outside wait-tot"));
        for (long exit : o.exitNanos()) {
            Run under = find(r, exit, POLICIES.get(0));
            Run outside = find(r, exit, POLICIES.get(1));
            out.append(String.format(Locale.ROOT, "  %8s %12.0f %12.0f %8.2f %16s %16s %16s %16s%n", micros(exit),
                    under.iops(), outside.iops(), r.ratio(exit), micros(under.holdMaxNs()),
                    micros(outside.holdMaxNs()), micros(under.waitTotalNs()), micros(outside.waitTotalNs())));
        }
        return out.toString();
    }

    private static Run find(Result r, long exit, String policy) {
        return r.runs().stream().filter(x -> x.exitNanos() == exit && x.policy().equals(policy)).findFirst()
                .orElseThrow();
    }

    /** Microseconds with two decimals, as /proc/lock_stat prints them. */
    static String micros(long nanos) {
        return String.format(Locale.ROOT, "%.2f", nanos / 1000.0);
    }

    private static String seconds(long nanos) {
        return nanos % 1_000_000_000L == 0 ? nanos / 1_000_000_000L + "s"
                : String.format(Locale.ROOT, "%.3fs", nanos / 1e9);
    }

    private static String size(long bytes) {
        if (bytes % (1L << 30) == 0) {
            return bytes / (1L << 30) + " GiB";
        }
        if (bytes % (1L << 20) == 0) {
            return bytes / (1L << 20) + " MiB";
        }
        return bytes + " bytes";
    }
}
