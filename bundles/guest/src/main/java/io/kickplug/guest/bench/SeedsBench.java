package io.kickplug.guest.bench;

import io.kickplug.guest.engine.Charging;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStats;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.GuestEngine;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.engine.SynchronousNotify;
import io.kickplug.guest.engine.VirtualTime;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.guest.fio.JobFileParser;
import io.kickplug.guest.fio.JobSpec;
import io.kickplug.guest.fio.TextFiles;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import static io.kickplug.guest.bench.SeedJobs.figures;
import static io.kickplug.guest.bench.SeedJobs.hipriFigures;
import static io.kickplug.guest.bench.SeedJobs.jobFile;
import static io.kickplug.guest.bench.SeedJobs.nullDisk;
import static io.kickplug.guest.bench.SeedJobs.params;

/**
 * {@code kp:bench seeds}: the five source experiments of {@code shared/seeds/} side by side, each run once, in
 * the simulated guest against temporary disks attached for the run and detached after it.
 *
 * <ul>
 * <li>000 kick under vs outside the vq lock: {@link KickBench} unchanged (seed 000's job file, 4 vCPUs, one
 * queue, exit latencies 1, 10 and 50 us);</li>
 * <li>001 the vq lock's lock statistics under vs outside the lock, seed 001's "4 concurrent dd bs=4k
 * iflag=direct" as 4 psync sequential-read jobs at iodepth 1;</li>
 * <li>002 immediate vs bh vs defer-call completion notification, randread 4k numjobs 8 at iodepth 64 and 1, 8
 * vCPUs, 8 queues on one I/O thread, interrupts per request from the device's per-queue counters;</li>
 * <li>003 interrupt vs poll: io_uring randread 4k numjobs 1 iodepth 1, hipri=0 vs hipri=1 on one queue
 * (the toggling mode of the seed: no poll queues), device-side polling off;</li>
 * <li>004 yielding vs mutex vs sharded tracked-requests lock: randread 4k iodepth 64 numjobs 8 through the
 * guest engine with 8 vCPUs, 8 queues on 4 I/O threads, null backend.</li>
 * </ul>
 *
 * <p>Every seed but 000 (which warms up inside {@link KickBench}) starts with one discarded warm-up run of its
 * first point, so the JIT compilation of the I/O path does not count against the first configuration; 004 warms up
 * before each lock kind, whose lock code is its own.
 */
public final class SeedsBench {

    public static final long DEFAULT_RUNTIME_NANOS = 3_000_000_000L;
    /** Longest discarded warm-up run per seed. */
    static final long MAX_WARMUP_NANOS = 1_000_000_000L;
    static final long MEMORY_DISK_BYTES = 64L << 20;
    static final long NULL_DISK_BYTES = 1L << 30;
    static final String DISK_PREFIX = "bench-seed";
    public static final List<Long> SEED000_EXIT_US = List.of(1L, 10L, 50L);
    /** Seed 001's host (2010, qemu-kvm-0.12.4, notify to user space): exits cost more than today's; the middle of
     * KickBench's range. docs/seeds.md, "The exit-cost model", gives the reason. */
    static final long SEED001_EXIT_NS = 10_000;
    public static final List<String> STRATEGIES = List.of(CompletionNotifier.IMMEDIATE, "bh", "defer-call");
    public static final List<TrackedLockKind> LOCK_KINDS = List.of(TrackedLockKind.YIELDING, TrackedLockKind.MUTEX,
            TrackedLockKind.SHARDED);

    /** The whole run: every seed, when it started, where the JSON went, and the JSON itself. */
    public record Report(List<SeedResult> seeds, long runtimeNanos, HostLoad load, String started, Path json,
            String jsonText, boolean quick) {

        public Report {
            seeds = List.copyOf(seeds);
        }

        public int hostCpus() {
            return load.cpus();
        }

        public String format() {
            return SeedsFormat.format(seeds, runtimeNanos, load, json == null ? null : json.toString(), quick);
        }
    }

    private final NotificationControl notifications;
    /** Runs each point: attach, boot, fio, detach. */
    private final SeedPointRunner runner;
    /** Points measured per run (warm-ups not counted): 000 8, 001 2, 002 6, 003 2, 004 3. */
    static final int TOTAL_POINTS = 21;

    /** The point runs a run of {@code o}'s seeds makes: each point once per round, 001's (model charging) once. */
    static int points(SeedsOptions o) {
        return SeedPlan.points(o);
    }

    private SeedsOptions options = new SeedsOptions(DEFAULT_RUNTIME_NANOS, null);
    private double freeCores;
    private SeedProgress progress = new SeedProgress(SeedPlan.of(options, true));
    /** Where the progress lines go (tests read them). */
    java.io.PrintStream progressOut = System.err;
    /** Where virtual time's actors run ({@link SeedsOptions#pinCpus}), resolved once per run. */
    private String pinCpus;
    /** The clock and id of the seed running now. */
    private SeedClock clock;
    private String seedId = "";
    /**
     * The round running now (1 outside rounds): virtual time's tie-break seed is {@code --seed} plus the round less one,
     * so that the rounds of a configuration differ in their scheduling as well as in the host's noise, and the spread
     * of the rounds covers both (under model charging, rounds with one seed would be identical); the configurations of
     * one round share it.
     */
    private int roundNumber = 1;

    /** The runtime's I/O threads, for ioeventfd off in real threads ({@link SynchronousNotify}); may be null. */
    private IoThreadFactory ioThreads;
    /** The Gogo command that started the run, for the JSON file's provenance; may be null. */
    private String command;

    /** With the Gogo command that runs it ("kp:bench seeds --json ..."), for the JSON file's provenance. */
    public SeedsBench withCommand(String gogoCommand) {
        this.command = gogoCommand;
        return this;
    }

    /** With the runtime's I/O thread factory: seed 000 also runs ioeventfd off in real threads. */
    public SeedsBench withIoThreads(IoThreadFactory factory) {
        this.ioThreads = factory;
        runner.ioThreads(factory);
        return this;
    }

    public SeedsBench(DiskManager disks, VirtqueueFactory virtqueues, GuestEngine engine, LockStats lockStats,
            NotificationControl notifications) {
        this.runner = new SeedPointRunner(disks, virtqueues, engine, lockStats, notifications);
        this.notifications = notifications;
    }

    /** Runs the five seeds, writes the JSON file. */
    public Report run(SeedsOptions o) {
        String started = ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        Provenance provenance = Provenance.now(command); // first: the load average before the run
        List<SeedResult> seeds = new ArrayList<>();
        HostLoad.Sample before = HostLoad.sample();
        options = o;
        freeCores = SeedClock.freeCores();
        pinCpus = o.pinCpus();
        // Seed 000's ioeventfd off runs in virtual time, or in real threads with the runtime's I/O threads.
        progress = new SeedProgress(SeedPlan.of(o, ioeventfdOffRuns(clockFor("000", KickBench.VCPUS, 1))), System::nanoTime,
                progressOut);
        if (o.runs("000")) {
            seeds.add(seed000(o.runtimeOf("000")));
        }
        if (o.runs("001")) {
            seeds.add(seed001(o.runtimeOf("001")));
        }
        if (o.runs("002")) {
            seeds.add(seed002(o.runtimeOf("002")));
        }
        if (o.runs("003")) {
            seeds.add(seed003(o.runtimeOf("003")));
        }
        if (o.runs("004")) {
            seeds.add(seed004(o.runtimeOf("004")));
        }
        HostLoad load = HostLoad.between(before, HostLoad.sample());
        // The heading's runtime per point: the longest a seed ran (model-charged seeds run less without --runtime).
        long runtime = SeedsOptions.SEEDS.stream().filter(o::runs).mapToLong(o::runtimeOf).max()
                .orElse(o.runtimeNanos());
        if (o.html() != null) {
            TextFiles.write(o.html(), SeedsHtml.write(seeds, runtime, load, started, o.quick()));
        }
        String text = SeedsJson.write(seeds, runtime, load, started, provenance, o.quick());
        Path json = o.json() != null ? o.json() : defaultJson();
        TextFiles.write(json, text);
        return new Report(seeds, runtime, load, started, json.toAbsolutePath(), text, o.quick());
    }

    private static Path defaultJson() {
        String stamp = ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT));
        return Path.of(System.getProperty("java.io.tmpdir"), "kickplug-seeds-" + stamp + ".json");
    }

    // ---------------------------------------------------------------------------------------------- 000

    /**
     * Seed 000 as the seed ran it: virtio-mmio, one virtqueue, EVENT_IDX, 4 vCPUs, its fio job file; with
     * ioeventfd off (2014's KVM/arm: a QueueNotify exit ran the queue's handler in the VMM before the vCPU
     * resumed) at exits of 1, 10 and 50 us, and with ioeventfd on (today's default) at 50 us. The verdict is
     * taken with ioeventfd off at the largest exit. ioeventfd off needs virtual time.
     */
    SeedResult seed000(long runtime) {
        int vcpus = KickBench.VCPUS;
        SeedClock clock = clockFor("000", vcpus, 1);
        List<Long> exits = SeedPlan.exits000(options);
        long last = exits.get(exits.size() - 1);
        // The seed's device is QEMU 2014's virtio-blk: its handler popped with notifications enabled, and
        // virtqueue_pop then publishes avail_event after every pop, so a guest that adds while the device drains
        // still notifies (today's drain loop, like Linux vhost, publishes it only on re-enabling).
        DiskSpec spec = DiskSpec.memory(freeName("000"), MEMORY_DISK_BYTES).withTransport(TransportKind.MMIO)
                .withQueues(KickBench.QUEUES, DiskSpec.DEFAULT_QUEUE_SIZE).withAvailEvent(AvailEventMode.POP);
        MachineConfig base = machine(spec.name(), vcpus);
        List<SeedResult.Point> points = new ArrayList<>();
        Map<String, Double> measured = new LinkedHashMap<>();
        List<String> notes = new ArrayList<>();
        TreeMap<Long, Double> ratios = new TreeMap<>();
        List<Boolean> ioeventfds = SeedPlan.ioeventfds000(options, ioeventfdOffRuns(clock));
        List<Double> effectRounds = List.of();
        if (!ioeventfdOffRuns(clock)) {
            notes.add("ioeventfd off (the seed's configuration) needs the runtime's I/O thread service in real threads");
        }
        for (String policy : SeedPlan.warmsUp(options, "000") ? KickBench.POLICIES : List.<String>of()) {
            point(spec, base.withLatencies(exits.get(0), base.injectLatencyNs()).withKickPolicy(policy),
                    KickBench.jobs(SeedPlan.warmUpNanos(runtime)), n -> { }, clock.withIoeventfd(ioeventfds.get(0)),
                    "000", SeedPlan.Step.WARM_UP + SeedPlan.label000(policy, exits.get(0), ioeventfds.get(0)));
        }
        StringBuilder line = new StringBuilder();
        for (boolean ioeventfd : ioeventfds) {
            List<Long> exitsHere = ioeventfd && ioeventfds.size() > 1 ? List.of(last) : exits;
            String tag = "ioeventfd " + (ioeventfd ? "on" : "off");
            line.append(line.length() == 0 ? "" : "; ").append(tag).append(": IOPS outside-lock / under-lock");
            for (long exit : exitsHere) {
                MachineConfig atExit = base.withLatencies(exit, base.injectLatencyNs());
                Map<String, SeedRounds> rounds = interleaved(KickBench.POLICIES, (policy, round) -> point(spec,
                        atExit.withKickPolicy(policy), KickBench.jobs(roundRuntime(runtime)), n -> { },
                        clock.withIoeventfd(ioeventfd), "000", SeedPlan.label000(policy, exit, ioeventfd) + round));
                Map<String, SeedPoint> byPolicy = new LinkedHashMap<>();
                for (String policy : KickBench.POLICIES) {
                    MachineConfig config = atExit.withKickPolicy(policy);
                    String label = SeedPlan.label000(policy, exit, ioeventfd);
                    SeedPoint m = rounds.get(policy).median();
                    byPolicy.put(policy, m);
                    LockStatRow vq = m.lock(spec.name() + " vq0");
                    Map<String, String> params = params(vcpus, 4, 64, "4k", "randread", "libaio", 1, 1, exit,
                            config.injectLatencyNs(), "memory", runtime);
                    params.put("kick", policy);
                    params.put("event-idx", (m.features() & VirtioFeatures.RING_EVENT_IDX) != 0 ? "on" : "off");
                    params.put("transport", "mmio");
                    params.put("ioeventfd", ioeventfd ? "on" : "off");
                    params.put("avail-event", spec.availEvent().id());
                    params.put("rounds", Integer.toString(options.rounds()));
                    Map<String, Double> f = rounds.get(policy).figures();
                    f.put("notifies/req", m.notifiesPerRequest());
                    f.put("irqs/req", m.interruptsPerRequest());
                    f.put("hold-max-us", vq == null ? Double.NaN : vq.holdtimeMaxNs() / 1e3);
                    f.put("wait-total-us", vq == null ? Double.NaN : vq.waittimeTotalNs() / 1e3);
                    points.add(new SeedResult.Point(label, params, f));
                    measured.put(policy + "_iops_exit_" + exit / 1000 + "us_ioeventfd_" + (ioeventfd ? "on" : "off"),
                            m.iops());
                }
                double ratio = SeedVerdicts.ratio(byPolicy.get("under-lock").iops(), byPolicy.get("outside-lock").iops());
                measured.put("ratio_exit_" + exit / 1000 + "us_ioeventfd_" + (ioeventfd ? "on" : "off"), ratio);
                if (ioeventfd == ioeventfds.get(0)) {
                    ratios.put(exit, ratio);
                    if (exit == last) {
                        effectRounds = SeedRounds.perRound(rounds.get("under-lock"), rounds.get("outside-lock"),
                                (under, outside) -> SeedVerdicts.ratio(under, outside) - 1);
                    }
                }
                line.append(String.format(Locale.ROOT, "%s %s at exit %d us", exit == exitsHere.get(0) ? ":" : ",",
                        SeedsFormat.ratio(ratio), exit / 1000));
            }
        }
        String verdictTag = "ioeventfd_" + (ioeventfds.get(0) ? "on" : "off");
        double ratio = ratios.get(last);
        line.append(String.format(Locale.ROOT, " (published 2.43; %.0f -> %.0f IOPS at exit %d us, %s)",
                measured.get("under-lock_iops_exit_" + last / 1000 + "us_" + verdictTag),
                measured.get("outside-lock_iops_exit_" + last / 1000 + "us_" + verdictTag), last / 1000,
                verdictTag.replace('_', ' ')));
        measured.put("ratio", ratio);
        return new SeedResult("000", "kick under vs outside the vq lock (Linux e8edca6f, 2014)",
                "14K -> 34K IOPS, ratio 2.43 (arm64 qemu-kvm, 4 vCPUs, fio randread 4k iodepth 64 numjobs 4 libaio,"
                        + " EVENT_IDX on)",
                figures("under_iops", 14_000, "outside_iops", 34_000, "ratio", 34.0 / 14.0),
                "IOPS outside-lock / under-lock > 1 at the largest exit cost (" + last / 1000 + " us), "
                        + verdictTag.replace('_', ' '), points, line.toString(), measured,
                SeedVerdicts.seed000(ratios), notes)
                .with((ratio - 1) / (34.0 / 14.0 - 1), clock.describe(options.rounds())).withEffectRounds(effectRounds);
    }

    // ---------------------------------------------------------------------------------------------- 001

    SeedResult seed001(long runtime) {
        int vcpus = 4;
        // The seed's host (qemu-kvm-0.12.4, 2010) handled a virtio-blk notify in the vCPU thread: ioeventfd for
        // virtio-blk came to QEMU later (0.14, 2011), so in virtual time the seed runs with ioeventfd off.
        clock = clockFor("001", vcpus, 1).withIoeventfd(false);
        if (clock.virtual() && clock.charging() == Charging.MEASURED) {
            // The seed's figures are maxima of lock hold and wait times: one JVM event inside a measured critical
            // section (a page fault on fresh heap, a deoptimization) sets them, which a kernel spinlock holder
            // never pays. Model charging leaves inside the vq lock only what the guest and the exit do there.
            clock = clock.withCharging(Charging.MODEL, "model charging for lock maxima");
        }
        seedId = "001";
        String jobs = jobFile("seed001", "read", "psync", 1, 4, null, runtime);
        DiskSpec spec = DiskSpec.memory(freeName("001"), MEMORY_DISK_BYTES);
        List<SeedResult.Point> points = new ArrayList<>();
        Map<String, LockStatRow> rows = new LinkedHashMap<>();
        MachineConfig base = machine(spec.name(), vcpus).withLatencies(SEED001_EXIT_NS,
                MachineConfig.DEFAULT_INJECT_LATENCY_NS);
        for (String policy : SeedPlan.warmsUp(options, "001") ? KickBench.POLICIES : List.<String>of()) {
            // Both policies warm up: a first use (class loading, compilation) inside the lock would be its max hold.
            warmUp(spec, base.withKickPolicy(policy), policy, "seed001", "read", "psync", 1, 4, null, runtime);
        }
        for (String policy : KickBench.POLICIES) {
            MachineConfig config = base.withKickPolicy(policy);
            SeedPoint m = point(spec, config, jobs, name -> { }, policy);
            LockStatRow vq = m.lock(spec.name() + " vq0");
            rows.put(policy, vq);
            Map<String, String> params = params(vcpus, 4, 1, "4k", "read (dd)", "psync", 1, 1, config.exitLatencyNs(),
                    config.injectLatencyNs(), "memory", runtime);
            params.put("kick", policy);
            params.put("ioeventfd", clock.virtual() ? "off" : "on");
            Map<String, Double> f = new LinkedHashMap<>();
            f.put("IOPS", m.iops());
            f.put("hold-max-us", vq.holdtimeMaxNs() / 1e3);
            f.put("hold-total-us", vq.holdtimeTotalNs() / 1e3);
            f.put("wait-max-us", vq.waittimeMaxNs() / 1e3);
            f.put("wait-total-us", vq.waittimeTotalNs() / 1e3);
            f.put("contentions", (double) vq.contentions());
            f.put("acquisitions", (double) vq.acquisitions());
            points.add(new SeedResult.Point(policy, params, f));
        }
        LockStatRow under = rows.get("under-lock");
        LockStatRow outside = rows.get("outside-lock");
        double holdPct = SeedVerdicts.percent(under.holdtimeMaxNs(), outside.holdtimeMaxNs());
        double waitMaxPct = SeedVerdicts.percent(under.waittimeMaxNs(), outside.waittimeMaxNs());
        double waitTotalPct = SeedVerdicts.percent(under.waittimeTotalNs(), outside.waittimeTotalNs());
        Map<String, Double> measured = new LinkedHashMap<>();
        measured.put("hold_max_under_us", under.holdtimeMaxNs() / 1e3);
        measured.put("hold_max_outside_us", outside.holdtimeMaxNs() / 1e3);
        measured.put("hold_max_change_pct", holdPct);
        measured.put("wait_max_change_pct", waitMaxPct);
        measured.put("wait_total_change_pct", waitTotalPct);
        measured.put("contentions_under", (double) under.contentions());
        measured.put("contentions_outside", (double) outside.contentions());
        String line = String.format(Locale.ROOT, "max hold %.2f -> %.2f us (%s), max wait %s, total wait %s, "
                + "contentions %d -> %d", under.holdtimeMaxNs() / 1e3, outside.holdtimeMaxNs() / 1e3,
                SeedsFormat.percent(holdPct), SeedsFormat.percent(waitMaxPct), SeedsFormat.percent(waitTotalPct),
                under.contentions(), outside.contentions());
        return new SeedResult("001", "vq lock statistics, kick under vs outside the lock (RFC, 2010)",
                "max hold 3271.81 -> 219.76 us (-93%), max wait -57%, total wait -69%, contentions 7108 -> 11550"
                        + " (up) (4 concurrent dd bs=4k iflag=direct, 2.6.35 guest)",
                figures("hold_max_under_us", 3271.81, "hold_max_outside_us", 219.76, "hold_max_change_pct", -93,
                        "wait_max_change_pct", -57, "wait_total_change_pct", -69, "contentions_under", 7108,
                        "contentions_outside", 11550),
                "outside-lock lowers both the vq lock's max hold time and its total wait time", points, line,
                measured, SeedVerdicts.seed001(under.holdtimeMaxNs(), outside.holdtimeMaxNs(),
                        under.waittimeTotalNs(), outside.waittimeTotalNs()), List.of())
                .with(holdPct / -93.0, clock.describe());
    }

    // ---------------------------------------------------------------------------------------------- 002

    SeedResult seed002(long runtime) {
        int vcpus = 8;
        int queues = 8;
        clock = clockFor("002", vcpus, 1);
        seedId = "002";
        DiskSpec spec = nullDisk(freeName("002"), queues, 1, TrackedLockKind.MUTEX);
        MachineConfig config = machine(spec.name(), vcpus);
        List<SeedResult.Point> points = new ArrayList<>();
        Map<String, Double> iops = new LinkedHashMap<>();
        Map<String, Double> irqs = new LinkedHashMap<>();
        List<String> notes = new ArrayList<>();
        List<Integer> depths = SeedPlan.iodepths002(options);
        List<String> strategies = SeedPlan.strategies002(options);
        for (String strategy : SeedPlan.warmUps002(options)) {
            // A full run warms up on the disk's own strategy, as before --quick; --quick warms up each strategy.
            Consumer<String> set = !options.quick() ? name -> { }
                    : name -> notifications.setStrategy(name, strategy, NotificationControl.ALL_QUEUES);
            point(spec, config, jobFile("seed002", "randread", "libaio", depths.get(0), 8, null,
                    SeedPlan.warmUpNanos(runtime)), set, SeedPlan.Step.WARM_UP + SeedPlan.label002(strategy,
                    depths.get(0)));
        }
        boolean allBound = true;
        List<Double> effectRounds = List.of();
        for (int iodepth : depths) {
            String jobs = jobFile("seed002", "randread", "libaio", iodepth, 8, null, roundRuntime(runtime));
            Map<String, SeedRounds> rounds = interleaved(strategies, (strategy, round) -> point(spec, config, jobs,
                    name -> notifications.setStrategy(name, strategy, NotificationControl.ALL_QUEUES),
                    SeedPlan.label002(strategy, iodepth) + round));
            if (iodepth == 64) {
                effectRounds = SeedRounds.perRound(rounds.get(CompletionNotifier.IMMEDIATE), rounds.get("defer-call"),
                        SeedVerdicts::percent);
            }
            for (String strategy : strategies) {
                SeedPoint m = rounds.get(strategy).median();
                boolean ran = m.strategiesUsed().equals(Set.of(strategy));
                if (!ran) {
                    allBound = false;
                    notes.add(strategy + " at iodepth " + iodepth + ": queues ran " + m.strategiesUsed()
                            + " (no service named " + strategy + " bound: is the batching bundle active?)");
                }
                Map<String, String> params = params(vcpus, 8, iodepth, "4k", "randread", "libaio", queues, 1,
                        config.exitLatencyNs(), config.injectLatencyNs(), "null", runtime);
                params.put("rounds", Integer.toString(options.rounds()));
                params.put("strategy", strategy);
                if (!ran) {
                    params.put("ran", String.join("+", new java.util.TreeSet<>(m.strategiesUsed())));
                }
                Map<String, Double> f = rounds.get(strategy).figures();
                f.put("irqs/req", m.interruptsPerRequest());
                f.put("suppressed/req", m.suppressedPerRequest());
                points.add(new SeedResult.Point(SeedPlan.label002(strategy, iodepth), params, f));
                iops.put(strategy + "@" + iodepth, m.iops());
                irqs.put(strategy + "@" + iodepth, m.interruptsPerRequest());
            }
        }
        // With --quick neither bh nor iodepth 1 runs: their figures are left out rather than given as NaN.
        boolean bh = strategies.contains("bh");
        double vsImm64 = SeedVerdicts.percent(iops.get("immediate@64"), iops.get("defer-call@64"));
        Map<String, Double> measured = new LinkedHashMap<>();
        if (bh) {
            measured.put("defer_call_vs_bh_iodepth64_pct", SeedVerdicts.percent(iops.get("bh@64"),
                    iops.get("defer-call@64")));
        }
        measured.put("defer_call_vs_immediate_iodepth64_pct", vsImm64);
        String depth1 = "iodepth 1 not run (--quick)";
        if (depths.contains(1)) {
            double vsImm1 = SeedVerdicts.percent(iops.get("immediate@1"), iops.get("defer-call@1"));
            if (bh) {
                measured.put("defer_call_vs_bh_iodepth1_pct", SeedVerdicts.percent(iops.get("bh@1"),
                        iops.get("defer-call@1")));
            }
            measured.put("defer_call_vs_immediate_iodepth1_pct", vsImm1);
            depth1 = SeedsFormat.percent(vsImm1) + " at iodepth 1" + (bh ? " (vs bh "
                    + SeedsFormat.percent(measured.get("defer_call_vs_bh_iodepth1_pct")) + ")" : "");
        }
        StringBuilder irqLine = new StringBuilder();
        for (String s : strategies) {
            measured.put(s + "_iops_iodepth64", iops.get(s + "@64"));
            measured.put(s + "_irqs_per_req_iodepth64", irqs.get(s + "@64"));
            irqLine.append(irqLine.length() == 0 ? "" : ", ")
                    .append(String.format(Locale.ROOT, "%s %.4f", s, irqs.get(s + "@64")));
        }
        String line = String.format(Locale.ROOT, "defer-call vs immediate: %s IOPS at iodepth 64 (%s), %s;"
                + " irqs/req at iodepth 64: %s", SeedsFormat.percent(vsImm64), bh ? "vs bh "
                        + SeedsFormat.percent(measured.get("defer_call_vs_bh_iodepth64_pct")) : "bh not run (--quick)",
                depth1, irqLine);
        if (!allBound) {
            // The queues fell back to immediate: the figures compare immediate with immediate.
            line = "not run: bh or defer-call was not bound, so the queues ran immediate in its place (" + line + ")";
        }
        return new SeedResult("002", "completion notification immediate vs bh vs defer-call (QEMU, 2023)",
                "+9% IOPS for defer-call at randread 4k iodepth 64 numjobs 8, one IOThread, 8 vCPUs; ~-1% at iodepth 1"
                        + " (called noise)",
                figures("defer_call_vs_immediate_iodepth64_pct", 9, "defer_call_vs_immediate_iodepth1_pct", -1),
                "defer-call IOPS > immediate IOPS at iodepth 64 (the seed's baseline, no completion batching; bh, "
                        + "the mechanism the series removed, beside it)", points, line, measured,
                allBound ? SeedVerdicts.seed002(iops.get("immediate@64"), iops.get("defer-call@64")) : null, notes)
                .with(vsImm64 / 9.0, clock.describe(options.rounds())).withEffectRounds(effectRounds);
    }

    // ---------------------------------------------------------------------------------------------- 003

    SeedResult seed003(long runtime) {
        int vcpus = 4;
        clock = clockFor("003", vcpus, 1);
        seedId = "003";
        DiskSpec spec = nullDisk(freeName("003"), 1, 1, TrackedLockKind.MUTEX);
        MachineConfig config = machine(spec.name(), vcpus).withPollQueues(0);
        List<SeedResult.Point> points = new ArrayList<>();
        Map<Boolean, SeedPoint> runs = new LinkedHashMap<>();
        for (boolean hipri : SeedPlan.warmsUp(options, "003") ? List.of(false, true) : List.<Boolean>of()) {
            warmUp(spec, config, SeedPlan.label003(hipri), "seed003", "randread", "io_uring", 1, 1, hipri, runtime);
        }
        Map<Boolean, SeedRounds> rounds = interleaved(List.of(false, true), (hipri, round) -> point(spec, config,
                jobFile("seed003", "randread", "io_uring", 1, 1, hipri, roundRuntime(runtime)), name -> { },
                SeedPlan.label003(hipri) + round));
        for (boolean hipri : List.of(false, true)) {
            SeedPoint m = rounds.get(hipri).median();
            runs.put(hipri, m);
            Map<String, String> params = params(vcpus, 1, 1, "4k", "randread", "io_uring", 1, 1,
                    config.exitLatencyNs(), config.injectLatencyNs(), "null", runtime);
            params.put("hipri", hipri ? "1" : "0");
            params.put("poll-queues", "0 (toggling)");
            params.put("device-poll", "off");
            params.put("rounds", Integer.toString(options.rounds()));
            Map<String, Double> f = rounds.get(hipri).figures();
            f.put("lat-mean-us", m.latMeanUs());
            f.put("lat-p99-us", m.latP99Us());
            f.put("irqs/req", m.interruptsPerRequest());
            points.add(new SeedResult.Point("hipri=" + (hipri ? 1 : 0), params, f));
        }
        SeedPoint irq = runs.get(false);
        SeedPoint poll = runs.get(true);
        double pct = SeedVerdicts.percent(irq.iops(), poll.iops());
        Map<String, Double> measured = hipriFigures(pct, irq.iops(), poll.iops(), irq.latMeanUs(), poll.latMeanUs());
        measured.put("hipri0_lat_p99_us", irq.latP99Us());
        measured.put("hipri1_lat_p99_us", poll.latP99Us());
        String line = String.format(Locale.ROOT, "hipri=1 vs hipri=0: IOPS %s (%.0f -> %.0f), mean latency %.2f -> %.2f"
                + " us, p99 %.2f -> %.2f us", SeedsFormat.percent(pct), irq.iops(), poll.iops(), irq.latMeanUs(),
                poll.latMeanUs(), irq.latP99Us(), poll.latP99Us());
        return new SeedResult("003", "interrupt vs polled completion, hipri=0 vs hipri=1 (Linux virtio_blk poll, 2021)",
                "~+20% IOPS (io_uring, numjobs 1, single vq, hipri=1 vs 0, NVMe-backed)",
                figures("iops_change_pct", 20), "hipri=1 IOPS > hipri=0 IOPS", points, line, measured,
                SeedVerdicts.seed003(irq.iops(), poll.iops()), List.of()).with(pct / 20.0, clock.describe(options.rounds()))
                .withEffectRounds(SeedRounds.perRound(rounds.get(false), rounds.get(true), SeedVerdicts::percent));
    }

    // ---------------------------------------------------------------------------------------------- 004

    SeedResult seed004(long runtime) {
        int vcpus = 8;
        int queues = 8;
        int ioThreads = 4;
        clock = clockFor("004", vcpus, ioThreads);
        seedId = "004";
        List<SeedResult.Point> points = new ArrayList<>();
        Map<TrackedLockKind, Double> iops = new LinkedHashMap<>();
        String name = freeName("004");
        String jobs = jobFile("seed004", "randread", "libaio", 64, 8, null, roundRuntime(runtime));
        MachineConfig config = machine(name, vcpus);
        List<TrackedLockKind> kinds = SeedPlan.lockKinds004(options);
        for (TrackedLockKind kind : SeedPlan.warmsUp(options, "004") ? kinds : List.<TrackedLockKind>of()) {
            // Every kind warms up: each runs its own lock code, which the JIT compiles during its first run.
            warmUp(nullDisk(name, queues, ioThreads, kind), config, kind.label(), "seed004", "randread", "libaio", 64,
                    8, null, runtime);
        }
        Map<TrackedLockKind, SeedRounds> rounds = interleaved(kinds, (kind, round) -> point(
                nullDisk(name, queues, ioThreads, kind), config, jobs, n -> { }, kind.label() + round));
        for (TrackedLockKind kind : kinds) {
            SeedPoint m = rounds.get(kind).median();
            iops.put(kind, m.iops());
            LockStatRow tracked = m.lock(name + " tracked-" + kind.label());
            Map<String, String> params = params(vcpus, 8, 64, "4k", "randread", "libaio", queues, ioThreads,
                    config.exitLatencyNs(), config.injectLatencyNs(), "null", runtime);
            params.put("tracked-lock", kind.label());
            params.put("driven-by", "guest engine (fio)");
            params.put("rounds", Integer.toString(options.rounds()));
            Map<String, Double> f = rounds.get(kind).figures();
            f.put("lock-contentions", tracked == null ? Double.NaN : tracked.contentions());
            f.put("lock-wait-total-us", tracked == null ? Double.NaN : tracked.waittimeTotalNs() / 1e3);
            f.put("lock-hold-max-us", tracked == null ? Double.NaN : tracked.holdtimeMaxNs() / 1e3);
            f.put("lock-acquisitions", tracked == null ? Double.NaN : tracked.acquisitions());
            f.put("lock-hold-mean-us", tracked == null || tracked.acquisitions() == 0 ? Double.NaN
                    : tracked.holdtimeTotalNs() / 1e3 / tracked.acquisitions());
            points.add(new SeedResult.Point(kind.label(), params, f));
        }
        double yielding = iops.get(TrackedLockKind.YIELDING);
        double mutex = iops.get(TrackedLockKind.MUTEX);
        double sharded = iops.getOrDefault(TrackedLockKind.SHARDED, Double.NaN); // not run with --quick
        Map<String, Double> measured = SeedsFormat.seed004Figures(yielding, mutex, sharded);
        String line = SeedsFormat.seed004Line(yielding, mutex, sharded);
        return new SeedResult("004", "tracked-requests lock yielding vs mutex vs sharded (QEMU reqs_lock, 2023)",
                "254k -> 517k IOPS, ratio 2.04 (randread 4k iodepth 64, 4 IOThreads, 8 virtqueues)",
                figures("yielding_iops", 254_000, "mutex_iops", 517_000, "mutex_vs_yielding_ratio", 517.0 / 254.0),
                "mutex IOPS > yielding IOPS", points, line, measured, SeedVerdicts.seed004(yielding, mutex),
                List.of("driven through the guest engine (8 vCPU threads running fio jobs, where TrackedLockBench "
                        + "runs its own randread jobs)")).with((SeedVerdicts.ratio(yielding, mutex) - 1) / (517.0 / 254.0 - 1),
                clock.describe(options.rounds())).withEffectRounds(SeedRounds.perRound(rounds.get(TrackedLockKind.YIELDING),
                        rounds.get(TrackedLockKind.MUTEX), (y, m) -> SeedVerdicts.ratio(y, m) - 1));
    }

    // ---------------------------------------------------------------------------------------------- runs

    /** Every configuration of {@code keys} in {@link SeedsOptions#rounds()} interleaved rounds ({@link SeedRounds}). */
    private <K> Map<K, SeedRounds> interleaved(List<K> keys, BiFunction<K, String, SeedPoint> round) {
        return SeedRounds.interleave(options.rounds(), keys, (k, r) -> {
            roundNumber = r.number();
            try {
                return round.apply(k, r.tag());
            } finally {
                roundNumber = 1;
            }
        });
    }

    /** A round's runtime: the point's runtime shared among its rounds ({@link SeedPlan#roundNanos}). */
    private long roundRuntime(long runtime) {
        return Math.max(1, runtime / options.rounds());
    }

    /** Whether seed 000's ioeventfd off runs with {@code clock}: virtual time, or the runtime's I/O threads. */
    private boolean ioeventfdOffRuns(SeedClock clock) {
        return clock.virtual() || ioThreads != null;
    }

    /** Virtual time when asked, or (auto) when the seed's vCPUs and I/O threads outnumber the host's free cores. */
    SeedClock clockFor(String seed, int vcpus, int ioThreads) {
        return SeedClock.of(options, seed, freeCores, pinCpus, vcpus);
    }

    /** One point with the seed's clock: {@code label} names it in the progress line (a warm-up's starts "warm-up "). */
    private SeedPoint point(DiskSpec spec, MachineConfig config, String jobFile, Consumer<String> setup, String label) {
        return point(spec, config, JobFileParser.parse(jobFile), setup, clock, seedId, label);
    }

    /**
     * One point with {@code how}: the seed's progress line around a {@link SeedPointRunner} run, whose virtual-time
     * tie-break seed is the clock's plus the round less one.
     */
    private SeedPoint point(DiskSpec spec, MachineConfig config, List<JobSpec> jobs, Consumer<String> setup,
            SeedClock how, String seed, String label) {
        progress.begin(seed, label, jobs.get(0).runtimeNanos());
        try {
            return runner.run(spec, config, jobs, setup, how, how.seed() + roundNumber - 1);
        } finally {
            progress.end();
        }
    }

    /** One discarded run of up to {@link #MAX_WARMUP_NANOS} of a point of the seed ({@code variant}). */
    private void warmUp(DiskSpec spec, MachineConfig config, String variant, String name, String rw,
            String engineName, int iodepth, int numjobs, Boolean hipri, long runtime) {
        point(spec, config, jobFile(name, rw, engineName, iodepth, numjobs, hipri, SeedPlan.warmUpNanos(runtime)),
                n -> { }, SeedPlan.Step.WARM_UP + variant);
    }

    private MachineConfig machine(String name, int vcpus) {
        return runner.machine(name, vcpus);
    }

    private String freeName(String seed) {
        return runner.freeName(seed);
    }
}
