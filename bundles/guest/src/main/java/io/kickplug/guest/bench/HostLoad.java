package io.kickplug.guest.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * What the host was doing while a benchmark ran, measured rather than assumed: the busy cores over the run
 * from {@code /proc/stat} (all CPUs, non-idle time), this JVM's share from {@code /proc/self/stat}
 * (utime + stime; both files count in the same USER_HZ ticks, so no tick rate is needed), the rest being
 * other processes, and the 1-minute load average at start and end from {@code /proc/loadavg}.
 *
 * @param cpus processors the JVM saw
 * @param busyCores cores busy on average over the run (all processes); NaN when /proc could not be read
 * @param ownCores of which this JVM (the benchmark itself); NaN when not measured
 * @param loadAvgStart 1-minute load average at the start; NaN when not measured
 * @param loadAvgEnd 1-minute load average at the end; NaN when not measured
 */
public record HostLoad(int cpus, double busyCores, double ownCores, double loadAvgStart, double loadAvgEnd) {

    /** Other processes' average busy cores from which the host counts as shared. */
    public static final double SHARED_CORES = 0.25;
    /** The most vCPUs a seed runs (002: 8): fewer host cores than this oversubscribe the host by themselves. */
    public static final int SEED_VCPUS = 8;

    /** The load of a host of {@code cpus} processors that was not measured (every figure NaN). */
    public static HostLoad unmeasured(int cpus) {
        return new HostLoad(cpus, Double.NaN, Double.NaN, Double.NaN, Double.NaN);
    }

    /** A reading of the counters at one moment. */
    public record Sample(int cpus, long busyTicks, long totalTicks, long ownTicks, double loadAvg) {
    }

    /** Reads the counters now; fields it could not read are -1 (ticks) or NaN (load average). */
    public static Sample sample() {
        int cpus = Runtime.getRuntime().availableProcessors();
        long busy = -1;
        long total = -1;
        long own = -1;
        double load = Double.NaN;
        try {
            String cpu = Files.readAllLines(Path.of("/proc/stat"), StandardCharsets.US_ASCII).get(0);
            String[] f = cpu.trim().split("\\s+"); // cpu user nice system idle iowait irq softirq steal ...
            if (f[0].equals("cpu") && f.length >= 8) {
                long sum = 0;
                for (int i = 1; i < Math.min(f.length, 9); i++) { // guest time is already in user
                    sum += Long.parseLong(f[i]);
                }
                total = sum;
                busy = sum - Long.parseLong(f[4]) - Long.parseLong(f[5]);
            }
        } catch (IOException | RuntimeException e) {
            // not Linux or no /proc: not measured
        }
        try {
            String stat = Files.readString(Path.of("/proc/self/stat"), StandardCharsets.US_ASCII);
            String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+"); // fields from 3 on
            own = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime (14), stime (15)
        } catch (IOException | RuntimeException e) {
            own = -1;
        }
        try {
            load = Double.parseDouble(Files.readString(Path.of("/proc/loadavg"), StandardCharsets.US_ASCII)
                    .trim().split("\\s+")[0]);
        } catch (IOException | RuntimeException e) {
            load = Double.NaN;
        }
        return new Sample(cpus, busy, total, own, load);
    }

    /** The load between two samples. */
    public static HostLoad between(Sample start, Sample end) {
        double busy = Double.NaN;
        double own = Double.NaN;
        long total = end.totalTicks() - start.totalTicks();
        if (start.totalTicks() >= 0 && end.totalTicks() >= 0 && total > 0) {
            busy = end.cpus() * (double) (end.busyTicks() - start.busyTicks()) / total;
            if (start.ownTicks() >= 0 && end.ownTicks() >= 0) {
                own = end.cpus() * (double) (end.ownTicks() - start.ownTicks()) / total;
            }
        }
        return new HostLoad(end.cpus(), busy, own, start.loadAvg(), end.loadAvg());
    }

    /** Average cores other processes kept busy; NaN when not measured. */
    public double otherCores() {
        return Double.isNaN(busyCores) || Double.isNaN(ownCores) ? Double.NaN : Math.max(0, busyCores - ownCores);
    }

    /** Whether the measurement says other processes shared the host (false when not measured). */
    public boolean shared() {
        return otherCores() >= SHARED_CORES;
    }

    /** One line for the report: the figures, then what they mean for reading the results. */
    public String describe() {
        StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "host CPUs %d", cpus));
        if (Double.isNaN(busyCores)) {
            s.append("; host load not measured");
        } else {
            s.append(String.format(Locale.ROOT, "; during the run %.2f cores busy on average: this JVM %s, other"
                    + " processes %s (/proc/stat)", busyCores, cores(ownCores), cores(otherCores())));
        }
        if (!Double.isNaN(loadAvgStart)) {
            s.append(String.format(Locale.ROOT, "; load average %.2f -> %.2f (1 min)", loadAvgStart, loadAvgEnd));
        }
        String why;
        if (shared()) {
            why = "a shared host (other processes used " + cores(otherCores()) + " cores)";
        } else if (Double.isNaN(otherCores())) {
            why = null;
        } else {
            why = "no other load measured (under " + SHARED_CORES + " cores)";
        }
        boolean small = cpus < SEED_VCPUS;
        s.append(" (");
        if (why != null) {
            s.append(why).append("; ");
        }
        if (small) {
            s.append(cpus).append(" cores for up to ").append(SEED_VCPUS).append(" vCPUs; ");
        }
        s.append(shared() || small ? "compare directions, not sizes)" : "sizes comparable between runs on this host)");
        return s.toString();
    }

    private static String cores(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.2f", v);
    }
}
