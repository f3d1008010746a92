package io.kickplug.guest.compare;

import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollStatus;
import java.util.LinkedHashMap;
import java.util.Map;
import io.kickplug.guest.fio.DirectionStats;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.guest.fio.JobResult;
import io.kickplug.guest.fio.LatencyStat;
import java.time.ZonedDateTime;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * Runs a {@link ComparePlan} on one disk: before each run, every queue of the disk switches to the run's strategy
 * (and the run waits until each uses it); the disk's counters are read before and after the job; the queues go back
 * to the strategies they were configured with when the comparison ends, whatever happened. Plain: the job and the
 * control are passed in.
 */
public final class CompareRun {

    /** How long a switch may take before the comparison gives up on the candidate (it is not bound). */
    static final long SWITCH_WAIT_NANOS = TimeUnit.SECONDS.toNanos(5);

    private CompareRun() {
    }

    /**
     * @param job runs the fio job once, on the machine booted for the comparison
     * @param log receives one line per run as it ends ("round 1/3 bh: 41.2k IOPS ...")
     * @throws IllegalArgumentException when a candidate is not a bound strategy
     */
    public static CompareResult run(String disk, String jobText, ComparePlan plan, NotificationControl control,
            Supplier<FioReport> job, java.util.function.Consumer<String> log) {
        List<Setting> settings = Setting.of(plan.candidates(), List.of());
        return run(disk, jobText, settings, plan.rounds(), control, null, job, log);
    }

    /** The disk's device-side polling, as the comparison sets it ({@code DiskManager}'s, for one disk). */
    public interface Polling {
        PollStatus status();

        PollStatus set(boolean enabled, PollParams params);
    }

    /**
     * Runs every setting {@code rounds} times, interleaved.
     *
     * @param polling the disk's polling, needed when a setting sets it ({@code null} otherwise)
     */
    public static CompareResult run(String disk, String jobText, List<Setting> settings, int rounds,
            NotificationControl control, Polling polling, Supplier<FioReport> job,
            java.util.function.Consumer<String> log) {
        Map<String, Setting> byLabel = new LinkedHashMap<>();
        settings.forEach(s -> byLabel.put(s.label(), s));
        ComparePlan plan = new ComparePlan(List.copyOf(byLabel.keySet()), rounds);
        List<String> bound = control.strategies();
        for (Setting s : settings) {
            if (!bound.contains(s.strategy())) {
                throw new IllegalArgumentException("strategy '" + s.strategy() + "' is not bound (bound: "
                        + String.join(", ", bound) + "; kp:install PATH installs a plugin)");
            }
        }
        boolean setsPolling = settings.stream().anyMatch(s -> s.poll() != null);
        if (setsPolling && polling == null) {
            throw new IllegalArgumentException("this comparison cannot set polling");
        }
        String started = ZonedDateTime.now().withNano(0).toString();
        List<QueueCounters> before = control.counters(disk);
        PollStatus pollBefore = setsPolling ? polling.status() : null;
        List<Sample> samples = new ArrayList<>();
        try {
            for (ComparePlan.Step step : plan.steps()) {
                Setting setting = byLabel.get(step.candidate());
                if (setting.poll() != null) {
                    poll(polling, pollBefore, setting.poll());
                }
                use(control, disk, setting.strategy());
                long[] t0 = Sample.totals(control.counters(disk));
                FioReport report = job.get();
                long[] t1 = Sample.totals(control.counters(disk));
                Sample s = sample(step, report, t0, t1);
                samples.add(s);
                log.accept(String.format(java.util.Locale.ROOT, "round %d/%d %s: %.0f IOPS, %.2f irq/req, "
                        + "%.2f kick/req, p99 %.0f us%s", step.round() + 1, plan.rounds(), step.candidate(), s.iops(),
                        s.interruptsPerRequest(), s.kicksPerRequest(), s.p99Micros(),
                        s.errors().isEmpty() ? "" : " FAILED: " + s.errors().get(0)));
            }
        } finally {
            restore(control, disk, before);
            if (pollBefore != null) {
                polling.set(pollBefore.requested(), pollBefore.params());
            }
        }
        return new CompareResult(disk, jobText, plan, samples, started);
    }

    /** Sets the disk's polling; polling on needs a bound poll policy. */
    static void poll(Polling polling, PollStatus before, Setting.Poll poll) {
        PollParams params = poll.maxNs() < 0 ? before.params() : before.params().withMaxNs(poll.maxNs());
        PollStatus now = polling.set(poll.enabled(), params);
        if (poll.enabled() && !now.active()) {
            throw new IllegalStateException("polling is not active on disk '" + now.disk() + "': no poll policy is "
                    + "bound (bundle io.kickplug.poll)");
        }
    }

    /** Switches every queue of {@code disk} to {@code strategy} and waits until each uses it. */
    static void use(NotificationControl control, String disk, String strategy) {
        control.setStrategy(disk, strategy, NotificationControl.ALL_QUEUES);
        long deadline = System.nanoTime() + SWITCH_WAIT_NANOS;
        while (true) {
            List<QueueCounters> now = control.counters(disk);
            if (now.stream().allMatch(q -> q.strategy().equals(strategy))) {
                return;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new IllegalStateException("disk '" + disk + "' does not use '" + strategy + "' after "
                        + TimeUnit.NANOSECONDS.toSeconds(SWITCH_WAIT_NANOS) + " s (kp:strategies shows what is bound)");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    /** Puts each queue back to the strategy it was configured with before the comparison. */
    static void restore(NotificationControl control, String disk, List<QueueCounters> before) {
        for (QueueCounters q : before) {
            try {
                control.setStrategy(disk, q.configured(), q.queue());
            } catch (RuntimeException detached) {
                return; // the disk went away: nothing to put back
            }
        }
    }

    static Sample sample(ComparePlan.Step step, FioReport report, long[] t0, long[] t1) {
        long ios = 0;
        long runtime = 0;
        LatencyStat clat = new LatencyStat();
        for (JobResult j : report.reported()) {
            for (DirectionStats d : List.of(j.read(), j.write())) {
                ios += d.ios();
                clat.add(d.clat());
            }
            runtime = Math.max(runtime, j.runtimeNanos());
        }
        double p50 = clat.count() == 0 ? Double.NaN : clat.percentile(50) / 1e3;
        double p99 = clat.count() == 0 ? Double.NaN : clat.percentile(99) / 1e3;
        return new Sample(step.candidate(), step.round(), ios, runtime / 1e9, t1[0] - t0[0], t1[1] - t0[1],
                t1[2] - t0[2], p50, p99, report.guest().deviceCpuNanos(), report.errorLines());
    }
}
