package io.kickplug.guest.bench;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStats;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;
import static io.kickplug.guest.bench.SeedJobs.hipriFigures;
import static io.kickplug.guest.bench.SeedJobs.nullDisk;

/**
 * {@code kp:bench seeds --real-guest}: seeds 002, 003 and 004 on a Linux guest (the real-guest harness's Debian
 * cloud kernel and fio, in QEMU) over Kickplug's vhost-user-blk export of a null disk attached in this runtime.
 * One boot per seed: the guest runs one fio job per point in step mode, and between the jobs this runtime
 * switches what the seed compares on the running disk, as {@code kp:notify} and {@code kp:tracked-lock} do
 * (002: immediate, bh, defer-call at iodepth 64 and 1; 003: hipri=0 and hipri=1 with
 * {@code virtio_blk.poll_queues=1}; 004: yielding, mutex, sharded). Each boot starts with one discarded
 * warm-up job (QEMU translates the guest's code on first use). Per point: fio's IOPS and latencies in the
 * guest, and the exported device's requests, interrupts and kicks from its counters.
 */
public final class RealGuestBench {

    /** Makes and ends the vhost-user export of a disk ({@code kp:vhost}, {@code kp:vhost-stop}). */
    public interface Exporter {
        void export(String disk, Path socket, int queues);

        void stop(String disk);
    }

    /** Starts QEMU with a command line (tests give their own). */
    interface Launcher {
        GuestConsole start(List<String> command) throws IOException;
    }

    static final String DISK_PREFIX = "bench-guest";
    /** About 9 s on an idle 2-core host under TCG; one boot took over 240 s at load average 40-60. */
    static final long BOOT_TIMEOUT_NANOS = 600_000_000_000L;
    /** Over fio's runtime: its start-up in the guest (about 1.5 s under TCG) and a loaded host. */
    static final long STEP_SLACK_NANOS = 120_000_000_000L;
    static final String TCG_NOTE = "TCG: QEMU emulates the guest's 2 vCPUs instruction by instruction on the host's"
            + " cores, so fio and the guest kernel cost tens of microseconds per I/O and hide most of what the device"
            + " side changes; verdicts here may differ from the simulated and the published ones";

    private final DiskManager disks;
    private final NotificationControl notifications;
    private final LockStats lockStats;
    private final Exporter exporter;
    private Launcher launcher = GuestConsole::start;
    private String accel;

    public RealGuestBench(DiskManager disks, NotificationControl notifications, LockStats lockStats,
            Exporter exporter) {
        this.disks = disks;
        this.notifications = notifications;
        this.lockStats = lockStats;
        this.exporter = exporter;
    }

    /** With another way to start QEMU and a fixed accelerator (tests). */
    RealGuestBench with(Launcher l, String accelerator) {
        this.launcher = l;
        this.accel = accelerator;
        return this;
    }

    /** Runs the three seeds, or says why not. */
    public RealGuestReport run(RealGuestOptions o, Map<String, String> env) {
        Path dir = o.imageDir();
        if (exporter == null) {
            return RealGuestReport.notRun("the vhost-user bundle (kp:vhost) is not active in this runtime", dir.toString(),
                    o.runtimeNanos());
        }
        RealGuestImage.Located found = RealGuestImage.locate(o.qemu(), dir, env);
        if (found.missing() != null) {
            return RealGuestReport.notRun(found.missing(), dir.toString(), o.runtimeNanos());
        }
        RealGuestImage image = found.image();
        String how = accel != null ? accel : RealGuestImage.accel();
        HostLoad.Sample before = HostLoad.sample();
        List<RealGuestReport.Seed> seeds = new ArrayList<>();
        for (Plan plan : List.of(seed002(o.runtimeNanos()), seed003(o.runtimeNanos()), seed004(o.runtimeNanos()))) {
            seeds.add(runSeed(plan.withSteps(rounds(plan.steps(), o.rounds())), image, how, o.runtimeNanos()));
        }
        return new RealGuestReport(null, how, image.qemuVersion(), image.kernelVersion(), dir.toString(),
                o.runtimeNanos(), o.rounds(), HostLoad.between(before, HostLoad.sample()), seeds);
    }

    // ---------------------------------------------------------------------------------------------- plans

    /**
     * One fio job in the guest.
     *
     * @param name the job's file name in the guest ({@code /rg/NAME.fio}) and step name
     * @param label the point's label, null for the warm-up
     * @param job the fio job file
     * @param params the point's parameters, in print order
     * @param apply what the host switches before the job
     */
    record Step(String name, String label, String job, Map<String, String> params, Runnable apply) {

        /** The variant a round's step measures: its name without the round suffix ("bh64" for "bh64_2"). */
        String variant() {
            int r = name.indexOf('_');
            return r < 0 ? name : name.substring(0, r);
        }
    }

    /**
     * The warm-up, then {@code rounds} rounds of the measured steps, interleaved (A B C A B C) so that a drift of the
     * host's load spreads over every variant; a later round's step is named "NAME_R" and has the round count in
     * its parameters.
     */
    static List<Step> rounds(List<Step> steps, int rounds) {
        List<Step> out = new ArrayList<>();
        steps.stream().filter(st -> st.label() == null).forEach(out::add);
        for (int r = 1; r <= rounds; r++) {
            for (Step st : steps) {
                if (st.label() == null) {
                    continue;
                }
                Map<String, String> p = new LinkedHashMap<>(st.params());
                p.put("rounds", Integer.toString(rounds));
                out.add(new Step(r == 1 ? st.name() : st.name() + "_" + r, st.label(), st.job(), p, st.apply()));
            }
        }
        return out;
    }

    /** A seed on the real guest: its disk, export, guest settings and steps, and how its result is built. */
    record Plan(String id, String title, DiskSpec disk, int queues, String blkParams, List<Step> steps,
            java.util.function.Function<Map<String, Measured>, RealGuestReport.Seed> result) {

        Plan withSteps(List<Step> other) {
            return new Plan(id, title, disk, queues, blkParams, other, result);
        }
    }

    /** A point's figures: fio's in the guest and the exported device's counters. */
    record Measured(Step step, FioTerse fio, long guestIrqs, long requests, long interrupts, long suppressed,
            long kicks, Set<String> strategies, List<LockStatRow> locks, List<Double> roundIops) {

        /**
         * The rounds of one variant together: fio's IOPS, mean latency and p99 are the medians of the rounds, the
         * device's counters and the guest's interrupts are summed (so per-request figures cover every round).
         */
        static Measured merge(List<Measured> rounds) {
            Measured first = rounds.get(0);
            if (rounds.size() == 1) {
                return first;
            }
            List<Double> iops = rounds.stream().map(x -> x.fio().iops()).toList();
            FioTerse f = new FioTerse(first.fio().job(), 0, median(iops), 0,
                    median(rounds.stream().map(x -> x.fio().clatMeanUs()).toList()),
                    median(rounds.stream().map(x -> x.fio().clatP99Us()).toList()),
                    median(rounds.stream().map(x -> x.fio().latMeanUs()).toList()), first.fio().runtimeMs());
            Set<String> strategies = new TreeSet<>();
            List<LockStatRow> locks = new ArrayList<>();
            long irqs = 0;
            for (Measured x : rounds) {
                strategies.addAll(x.strategies());
                locks.addAll(x.locks());
                irqs = irqs < 0 || x.guestIrqs() < 0 ? -1 : irqs + x.guestIrqs();
            }
            return new Measured(first.step(), f, irqs, rounds.stream().mapToLong(Measured::requests).sum(),
                    rounds.stream().mapToLong(Measured::interrupts).sum(),
                    rounds.stream().mapToLong(Measured::suppressed).sum(), rounds.stream().mapToLong(Measured::kicks).sum(),
                    Set.copyOf(strategies), locks, iops);
        }

        double perRequest(long n) {
            return requests <= 0 ? Double.NaN : (double) n / requests;
        }

        Map<String, Double> figures() {
            Map<String, Double> f = new LinkedHashMap<>();
            f.put("IOPS", fio.iops());
            if (roundIops.size() > 1) {
                f.put("IOPS-min", roundIops.stream().mapToDouble(Double::doubleValue).min().orElse(Double.NaN));
                f.put("IOPS-max", roundIops.stream().mapToDouble(Double::doubleValue).max().orElse(Double.NaN));
            }
            f.put("lat-mean-us", fio.latMeanUs());
            f.put("clat-p99-us", fio.clatP99Us());
            f.put("requests", (double) requests);
            f.put("irqs/req", perRequest(interrupts));
            f.put("guest-irqs/req", guestIrqs < 0 ? Double.NaN : perRequest(guestIrqs));
            f.put("kicks/req", perRequest(kicks));
            return f;
        }
    }

    /** fio on the guest's disk: direct 4k, group reporting, time based. */
    static String job(String name, String rw, String ioengine, int iodepth, int numjobs, Boolean hipri, long runtime) {
        StringBuilder t = new StringBuilder("[global]\nfilename=/dev/vda\ndirect=1\nbs=4k\n");
        t.append("ioengine=").append(ioengine).append("\niodepth=").append(iodepth).append("\nnumjobs=").append(numjobs)
                .append("\ngroup_reporting=1\n");
        if (hipri != null) {
            t.append("hipri=").append(hipri ? 1 : 0).append('\n');
        }
        t.append("time_based=1\nruntime=").append(runtime / 1_000_000_000L).append("\n[").append(name).append("]\nrw=")
                .append(rw).append('\n');
        return t.toString();
    }

    private Map<String, String> params(int numjobs, int iodepth, String ioengine, int queues, int ioThreads,
            String pollQueues, long runtime) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("vcpus", Integer.toString(RealGuestReport.VCPUS));
        p.put("numjobs", Integer.toString(numjobs));
        p.put("iodepth", Integer.toString(iodepth));
        p.put("bs", "4k");
        p.put("rw", "randread");
        p.put("ioengine", ioengine);
        p.put("queues", Integer.toString(queues));
        p.put("poll-queues", pollQueues);
        p.put("iothreads", Integer.toString(ioThreads));
        p.put("backend", "null");
        p.put("transport", "vhost-user-blk-pci");
        p.put("event-idx", "on");
        p.put("runtime", SeedsFormat.seconds(runtime));
        return p;
    }

    private static long warmup(long runtime) {
        return Math.min(runtime, 1_000_000_000L);
    }

    /** 002: the three strategies at iodepth 64 and 1, numjobs 2 (one per vCPU), 2 queues on one I/O thread. */
    Plan seed002(long runtime) {
        String disk = freeName("002");
        int queues = 2;
        List<Step> steps = new ArrayList<>();
        steps.add(new Step("warmup", null, job("warmup", "randread", "libaio", 64, 2, null, warmup(runtime)), Map.of(),
                () -> notifications.setStrategy(disk, SeedsBench.STRATEGIES.get(0), NotificationControl.ALL_QUEUES)));
        for (int iodepth : List.of(64, 1)) {
            for (String strategy : SeedsBench.STRATEGIES) {
                String name = strategy.replace("-", "") + iodepth;
                Map<String, String> p = params(2, iodepth, "libaio", queues, 1, "0", runtime);
                p.put("strategy", strategy);
                steps.add(new Step(name, strategy + " iodepth " + iodepth, job(name, "randread", "libaio", iodepth, 2,
                        null, runtime), p, () -> notifications.setStrategy(disk, strategy, NotificationControl.ALL_QUEUES)));
            }
        }
        return new Plan("002", "completion notification immediate vs bh vs defer-call",
                nullDisk(disk, queues, 1, TrackedLockKind.MUTEX), queues, "", steps, this::result002);
    }

    private RealGuestReport.Seed result002(Map<String, Measured> m) {
        List<SeedResult.Point> points = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        boolean allRan = true;
        for (Measured x : m.values()) {
            String strategy = x.step().params().get("strategy");
            Map<String, String> p = new LinkedHashMap<>(x.step().params());
            if (x.requests() <= 0) {
                allRan = false;
                notes.add(x.step().label() + ": no request reached the exported device's queues");
            } else if (!x.strategies().equals(Set.of(strategy))) {
                allRan = false;
                p.put("ran", String.join("+", new TreeSet<>(x.strategies())));
                notes.add(x.step().label() + ": the queues ran " + x.strategies() + " (is the batching bundle active?)");
            }
            Map<String, Double> f = x.figures();
            f.put("suppressed/req", x.perRequest(x.suppressed()));
            points.add(new SeedResult.Point(x.step().label(), p, f));
        }
        double imm64 = iops(m, "immediate64");
        double bh64 = iops(m, "bh64");
        double dc64 = iops(m, "defercall64");
        double vsImm64 = SeedVerdicts.percent(imm64, dc64);
        double vsBh64 = SeedVerdicts.percent(bh64, dc64);
        double vsImm1 = SeedVerdicts.percent(iops(m, "immediate1"), iops(m, "defercall1"));
        double vsBh1 = SeedVerdicts.percent(iops(m, "bh1"), iops(m, "defercall1"));
        Map<String, Double> figures = new LinkedHashMap<>();
        figures.put("defer_call_vs_immediate_iodepth64_pct", vsImm64);
        figures.put("defer_call_vs_bh_iodepth64_pct", vsBh64);
        figures.put("defer_call_vs_immediate_iodepth1_pct", vsImm1);
        figures.put("defer_call_vs_bh_iodepth1_pct", vsBh1);
        for (String s : SeedsBench.STRATEGIES) {
            Measured x = m.get(s.replace("-", "") + 64);
            figures.put(s + "_iops_iodepth64", x.fio().iops());
            figures.put(s + "_irqs_per_req_iodepth64", x.perRequest(x.interrupts()));
        }
        String line = String.format(Locale.ROOT, "defer-call vs immediate: %s IOPS at iodepth 64 (vs bh %s), %s at"
                + " iodepth 1 (vs bh %s); irqs/req at iodepth 64: immediate %.4f, bh %.4f, defer-call %.4f",
                SeedsFormat.percent(vsImm64), SeedsFormat.percent(vsBh64), SeedsFormat.percent(vsImm1),
                SeedsFormat.percent(vsBh1), figures.get("immediate_irqs_per_req_iodepth64"),
                figures.get("bh_irqs_per_req_iodepth64"), figures.get("defer-call_irqs_per_req_iodepth64"));
        Boolean direction = allRan ? SeedVerdicts.seed002(imm64, dc64) : null;
        if (!allRan) {
            line = "not run: the exported device's queues did not run each strategy (see the notes) (" + line + ")";
        }
        return new RealGuestReport.Seed("002", "completion notification immediate vs bh vs defer-call", null, points,
                line, figures, direction, vsImm64 / 9.0, notes);
    }

    /**
     * 003: io_uring randread numjobs 1 iodepth 1 with {@code virtio_blk.poll_queues=1} (2 queues: one with
     * interrupts, one polled, which has no call eventfd), hipri=0 then hipri=1; device-side polling off.
     */
    Plan seed003(long runtime) {
        String disk = freeName("003");
        int queues = 2;
        List<Step> steps = new ArrayList<>();
        steps.add(new Step("warmup", null, job("warmup", "randread", "io_uring", 1, 1, false, warmup(runtime)), Map.of(),
                () -> { }));
        for (boolean hipri : List.of(false, true)) {
            String name = "hipri" + (hipri ? 1 : 0);
            Map<String, String> p = params(1, 1, "io_uring", queues, 1, "1", runtime);
            p.put("hipri", hipri ? "1" : "0");
            p.put("device-poll", "off");
            steps.add(new Step(name, "hipri=" + (hipri ? 1 : 0), job(name, "randread", "io_uring", 1, 1, hipri, runtime),
                    p, () -> { }));
        }
        return new Plan("003", "interrupt vs polled completion, hipri=0 vs hipri=1",
                nullDisk(disk, queues, 1, TrackedLockKind.MUTEX), queues, "poll_queues=1", steps, this::result003);
    }

    private RealGuestReport.Seed result003(Map<String, Measured> m) {
        List<SeedResult.Point> points = new ArrayList<>();
        for (Measured x : m.values()) {
            points.add(new SeedResult.Point(x.step().label(), x.step().params(), x.figures()));
        }
        FioTerse irq = m.get("hipri0").fio();
        FioTerse poll = m.get("hipri1").fio();
        double pct = SeedVerdicts.percent(irq.iops(), poll.iops());
        Map<String, Double> figures = hipriFigures(pct, irq.iops(), poll.iops(), irq.latMeanUs(),
                poll.latMeanUs());
        figures.put("hipri0_irqs_per_req", m.get("hipri0").perRequest(m.get("hipri0").interrupts()));
        figures.put("hipri1_irqs_per_req", m.get("hipri1").perRequest(m.get("hipri1").interrupts()));
        String line = String.format(Locale.ROOT, "hipri=1 vs hipri=0: IOPS %s (%.0f -> %.0f), mean latency %.2f -> %.2f"
                + " us, irqs/req %.4f -> %.4f", SeedsFormat.percent(pct), irq.iops(), poll.iops(), irq.latMeanUs(),
                poll.latMeanUs(), figures.get("hipri0_irqs_per_req"), figures.get("hipri1_irqs_per_req"));
        return new RealGuestReport.Seed("003", "interrupt vs polled completion, hipri=0 vs hipri=1", null, points, line,
                figures, SeedVerdicts.seed003(irq.iops(), poll.iops()), pct / 20.0, List.of());
    }

    /** 004: the three lock kinds, randread libaio iodepth 64 numjobs 2, 2 queues on 2 I/O threads. */
    Plan seed004(long runtime) {
        String disk = freeName("004");
        int queues = 2;
        int ioThreads = 2;
        List<Step> steps = new ArrayList<>();
        steps.add(new Step("warmup", null, job("warmup", "randread", "libaio", 64, 2, null, warmup(runtime)), Map.of(),
                () -> disks.setTrackedLock(disk, SeedsBench.LOCK_KINDS.get(0))));
        for (TrackedLockKind kind : SeedsBench.LOCK_KINDS) {
            String name = kind.label();
            Map<String, String> p = params(2, 64, "libaio", queues, ioThreads, "0", runtime);
            p.put("tracked-lock", kind.label());
            steps.add(new Step(name, kind.label(), job(name, "randread", "libaio", 64, 2, null, runtime), p,
                    () -> disks.setTrackedLock(disk, kind)));
        }
        return new Plan("004", "tracked-requests lock yielding vs mutex vs sharded",
                nullDisk(disk, queues, ioThreads, TrackedLockKind.YIELDING), queues, "", steps, this::result004);
    }

    private RealGuestReport.Seed result004(Map<String, Measured> m) {
        List<SeedResult.Point> points = new ArrayList<>();
        List<String> notes = new ArrayList<>();
        for (Measured x : m.values()) {
            String kind = x.step().params().get("tracked-lock");
            Map<String, Double> f = x.figures();
            // The export's rows of this kind, one per round (reset before each).
            List<LockStatRow> rows = x.locks().stream().filter(r -> r.name().endsWith(" tracked-" + kind)).toList();
            long acquisitions = rows.stream().mapToLong(LockStatRow::acquisitions).sum();
            if (acquisitions == 0) {
                notes.add(kind + ": the export's " + kind + " lock was not used (" + x.locks().stream()
                        .filter(r -> r.acquisitions() > 0).map(LockStatRow::name).distinct().toList() + ")");
            }
            f.put("lock-contentions", rows.isEmpty() ? Double.NaN : rows.stream().mapToDouble(LockStatRow::contentions).sum());
            f.put("lock-wait-total-us", rows.isEmpty() ? Double.NaN
                    : rows.stream().mapToDouble(LockStatRow::waittimeTotalNs).sum() / 1e3);
            points.add(new SeedResult.Point(x.step().label(), x.step().params(), f));
        }
        double yielding = iops(m, "yielding");
        double mutex = iops(m, "mutex");
        double sharded = iops(m, "sharded");
        Map<String, Double> figures = SeedsFormat.seed004Figures(yielding, mutex, sharded);
        String line = SeedsFormat.seed004Line(yielding, mutex, sharded);
        return new RealGuestReport.Seed("004", "tracked-requests lock yielding vs mutex vs sharded", null, points, line,
                figures, SeedVerdicts.seed004(yielding, mutex),
                (SeedVerdicts.ratio(yielding, mutex) - 1) / (517.0 / 254.0 - 1), notes);
    }

    static double median(List<Double> values) {
        double[] v = values.stream().mapToDouble(Double::doubleValue).filter(x -> !Double.isNaN(x)).sorted().toArray();
        if (v.length == 0) {
            return Double.NaN;
        }
        return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2;
    }

    private static double iops(Map<String, Measured> m, String step) {
        return m.get(step).fio().iops();
    }

    // ---------------------------------------------------------------------------------------------- runs

    /** Attaches and exports the seed's disk, boots the guest, runs its steps, ends it all; a failure is "not run". */
    RealGuestReport.Seed runSeed(Plan plan, RealGuestImage image, String how, long runtime) {
        System.err.printf(Locale.ROOT, "kp:bench seeds --real-guest: seed %s, %d fio jobs of %s in one boot (%s)%n",
                plan.id(), plan.steps().size(), SeedsFormat.seconds(runtime), how);
        Path work = null;
        String name = plan.disk().name();
        boolean attached = false;
        boolean exported = false;
        try {
            work = Files.createTempDirectory("kp-real-guest-");
            Path socket = work.resolve("vhost.sock");
            disks.attach(plan.disk());
            attached = true;
            exporter.export(name, socket, plan.queues());
            exported = true;
            Path initrd = work.resolve("initrd");
            Map<String, byte[]> files = new LinkedHashMap<>();
            StringBuilder list = new StringBuilder();
            for (Step s : plan.steps()) {
                list.append(s.name()).append('\n');
                files.put("rg/" + s.name() + ".fio", s.job().getBytes(StandardCharsets.UTF_8));
            }
            files.put("rg/steps", list.toString().getBytes(StandardCharsets.UTF_8));
            Cpio.appendAligned(image.base(), Cpio.newc(files), initrd);
            Map<String, Step> byName = new LinkedHashMap<>();
            plan.steps().forEach(s -> byName.put(s.name(), s));
            Map<String, List<QueueCounters>> before = new HashMap<>();
            Map<String, List<Measured>> measured = new LinkedHashMap<>();
            Map<String, Object[]> after = new HashMap<>();
            try (GuestConsole console = launcher.start(image.command(initrd, socket, plan.queues(), how,
                    plan.blkParams()))) {
                List<RealGuestSteps.Output> outputs = RealGuestSteps.run(console,
                        plan.steps().stream().map(Step::name).toList(), new RealGuestSteps.Hooks() {
                            @Override
                            public void before(String step) {
                                byName.get(step).apply().run();
                                lockStats.reset();
                                before.put(step, notifications.exportCounters(name));
                            }

                            @Override
                            public void after(String step) {
                                after.put(step, new Object[] {notifications.exportCounters(name),
                                        lockStats.rows().stream().filter(r -> r.name().startsWith(name + " export"))
                                                .toList()});
                            }
                        }, BOOT_TIMEOUT_NANOS, runtime + STEP_SLACK_NANOS);
                for (RealGuestSteps.Output out : outputs) {
                    Step step = byName.get(out.step());
                    if (step.label() == null) {
                        continue;
                    }
                    @SuppressWarnings("unchecked")
                    List<QueueCounters> a = (List<QueueCounters>) after.get(out.step())[0];
                    @SuppressWarnings("unchecked")
                    List<LockStatRow> locks = (List<LockStatRow>) after.get(out.step())[1];
                    measured.computeIfAbsent(step.variant(), v -> new ArrayList<>())
                            .add(measure(step, out, before.get(out.step()), a, locks));
                }
            }
            Map<String, Measured> merged = new LinkedHashMap<>();
            measured.forEach((variant, runs) -> merged.put(variant, Measured.merge(runs)));
            return plan.result().apply(merged);
        } catch (IOException | RuntimeException e) {
            return RealGuestReport.Seed.notRun(plan.id(), plan.title(), String.valueOf(e.getMessage()));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return RealGuestReport.Seed.notRun(plan.id(), plan.title(), "interrupted");
        } finally {
            if (exported) {
                try {
                    exporter.stop(name);
                } catch (RuntimeException e) {
                    // the detach below ends the export too
                }
            }
            if (attached) {
                disks.detach(name);
            }
            delete(work);
        }
    }

    static Measured measure(Step step, RealGuestSteps.Output out, List<QueueCounters> before, List<QueueCounters> after,
            List<LockStatRow> locks) {
        QueueDeltas d = QueueDeltas.between(before, after);
        return new Measured(step, out.fio(), out.guestIrqs(), d.requests(), d.interruptsSent(),
                d.interruptsSuppressed(), d.kicks(), d.strategies(), locks, List.of(out.fio().iops()));
    }

    private String freeName(String seed) {
        Set<String> taken = new java.util.HashSet<>();
        disks.list().forEach(d -> taken.add(d.name()));
        String name = DISK_PREFIX + seed;
        for (int i = 2; taken.contains(name); i++) {
            name = DISK_PREFIX + seed + "-" + i;
        }
        return name;
    }

    private static void delete(Path dir) {
        if (dir == null) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            walk.sorted(Comparator.reverseOrder()).forEach(p -> {
                try {
                    Files.deleteIfExists(p);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (IOException | UncheckedIOException e) {
            // a temporary directory left behind
        }
    }
}
