package io.kickplug.guest.fio;

import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

/**
 * fio's human-readable output ({@code --output-format=normal}) in fio 3's shape: a job line per job or
 * group, per direction an IOPS/BW line, slat/clat/lat min/max/avg/stdev, the clat percentiles block and the
 * CPU line, then the "Run status group" summary. Units switch between nsec, usec and msec by fio's rules.
 */
public final class FioText {

    /** fio prints ctime()'s format. */
    static final DateTimeFormatter CTIME = DateTimeFormatter.ofPattern("EEE MMM ppd HH:mm:ss yyyy", Locale.ENGLISH);

    private FioText() {
    }

    public static String format(FioReport report) {
        StringBuilder out = new StringBuilder();
        FioReport.GuestInfo g = report.guest();
        out.append(String.format(Locale.ROOT, "guest: disk=%s (%s), vcpus=%d, queues=%d, exit latency=%d ns, "
                + "inject latency=%d ns, kick policy=%s%n", g.disk(), iec(g.capacityBytes()), g.vcpus(), g.queues(),
                g.exitLatencyNs(), g.injectLatencyNs(), g.kickPolicy()));
        String lastSection = null;
        for (JobSpec s : report.specs()) {
            if (s.cloneIndex() == 0 && !s.name().equals(lastSection)) {
                out.append(String.format(Locale.ROOT, "%s: (g=0): rw=%s, bs=(R) %dB-%dB, (W) %dB-%dB, (T) %dB-%dB, "
                        + "ioengine=%s, iodepth=%d%n", s.name(), s.rw().fioName(), s.bsMin(), s.bsMax(), s.bsMin(),
                        s.bsMax(), s.bsMin(), s.bsMax(), s.ioengine().fioName(), s.iodepth()));
                lastSection = s.name();
            }
        }
        int processes = report.specs().size();
        out.append("Starting ").append(processes).append(processes == 1 ? " process" : " processes")
                .append(System.lineSeparator());
        for (String e : report.errorLines()) {
            out.append("fio: ").append(e).append(System.lineSeparator());
        }
        out.append(System.lineSeparator());
        long pid = ProcessHandle.current().pid();
        for (JobResult r : report.reported()) {
            out.append(String.format(Locale.ROOT, "%s: (groupid=%d, jobs=%d): err=%2d: pid=%d: %s%n", r.name(),
                    r.groupId(), r.jobs(), r.error(), pid, CTIME.format(report.time())));
            direction(out, "read", r.read(), r.runtimeNanos());
            direction(out, "write", r.write(), r.runtimeNanos());
            out.append(String.format(Locale.ROOT, "  cpu          : usr=%.2f%%, sys=%.2f%%%n", r.usrPercent(),
                    r.sysPercent()));
        }
        out.append(System.lineSeparator());
        runStatus(out, report.jobs());
        out.append(String.format(Locale.ROOT, "%nguest counters: notifies=%d, interrupts=%d%n", g.notifies(),
                g.interrupts()));
        if (g.deviceCpuNanos() >= 0) {
            long ios = 0;
            for (JobResult r : report.jobs()) {
                ios += r.read().ios() + r.write().ios();
            }
            // Device CPU per request (issue 12: 1M requests per second of device CPU is 1 us per request).
            String perRequest = ios > 0
                    ? String.format(Locale.ROOT, ", %.2f us per request", g.deviceCpuNanos() / 1e3 / ios) : "";
            out.append(String.format(Locale.ROOT, "device I/O threads: cpu=%.1f ms (%.1f%% of one CPU)%s%n",
                    g.deviceCpuNanos() / 1e6, g.deviceCpuPercent(), perRequest));
        }
        return out.toString();
    }

    private static void direction(StringBuilder out, String dir, DirectionStats d, long runtimeNanos) {
        if (d.ios() == 0) {
            return;
        }
        double seconds = runtimeNanos / 1e9;
        double iops = seconds > 0 ? d.ios() / seconds : 0;
        double bw = seconds > 0 ? d.bytes() / seconds : 0;
        out.append(String.format(Locale.ROOT, "  %s: IOPS=%s, BW=%s/s (%s/s)(%s/%dmsec)%n", dir,
                num2str(iops, 4, 1000, new String[] {"", "k", "M", "G", "T"}), iec(bw), si(bw), iec(d.bytes()),
                millis(runtimeNanos)));
        latency(out, "slat", d.slat());
        latency(out, "clat", d.clat());
        latency(out, " lat", d.lat());
        percentiles(out, d.clat());
    }

    private static void latency(StringBuilder out, String name, LatencyStat s) {
        if (s.count() == 0) {
            return;
        }
        double min = s.min();
        double max = s.max();
        double mean = s.mean();
        double dev = s.stddev();
        String unit = "nsec";
        // fio's nsec_to_msec / nsec_to_usec rules.
        if (min > 2_000_000 && max > 99_999_999 && dev > 1_000_000.0) {
            unit = "msec";
            min /= 1e6;
            max /= 1e6;
            mean /= 1e6;
            dev /= 1e6;
        } else if (min > 2000 && max > 99_999 && dev > 1000.0) {
            unit = "usec";
            min /= 1e3;
            max /= 1e3;
            mean /= 1e3;
            dev /= 1e3;
        }
        out.append(String.format(Locale.ROOT, "    %s (%s): min=%s, max=%s, avg=%5.2f, stdev=%5.2f%n", name, unit,
                num2str(Math.floor(min), 6, 1000, new String[] {"", "k", "M", "G"}),
                num2str(Math.floor(max), 6, 1000, new String[] {"", "k", "M", "G"}), mean, dev));
    }

    private static void percentiles(StringBuilder out, LatencyStat clat) {
        double[] ps = LatencyStat.FIO_PERCENTILES;
        long[] values = new long[ps.length];
        long minv = Long.MAX_VALUE;
        long maxv = 0;
        for (int i = 0; i < ps.length; i++) {
            values[i] = clat.percentile(ps[i]);
            minv = Math.min(minv, values[i]);
            maxv = Math.max(maxv, values[i]);
        }
        long divisor = 1;
        String unit = "nsec";
        // fio's show_clat_percentiles scaling.
        if (minv > 2_000_000 && maxv > 99_999_999L) {
            divisor = 1_000_000;
            unit = "msec";
        } else if (minv > 2000 && maxv > 99_999) {
            divisor = 1000;
            unit = "usec";
        }
        int width = Long.toString(maxv / divisor).length();
        out.append("    clat percentiles (").append(unit).append("):").append(System.lineSeparator());
        for (int i = 0; i < ps.length; i++) {
            if (i % 4 == 0) {
                out.append("     |");
            }
            out.append(String.format(Locale.ROOT, " %5.2fth=[%" + width + "d]", ps[i], values[i] / divisor));
            boolean last = i == ps.length - 1;
            if (!last) {
                out.append(',');
            }
            if (i % 4 == 3 || last) {
                out.append(System.lineSeparator());
            }
        }
    }

    private static void runStatus(StringBuilder out, List<JobResult> jobs) {
        out.append("Run status group 0 (all jobs):").append(System.lineSeparator());
        for (int dir = 0; dir < 2; dir++) {
            long bytes = 0;
            long maxRun = 0;
            long minRun = Long.MAX_VALUE;
            double minBw = Double.MAX_VALUE;
            double maxBw = 0;
            boolean any = false;
            for (JobResult j : jobs) {
                DirectionStats d = dir == 0 ? j.read() : j.write();
                if (d.ios() == 0) {
                    continue;
                }
                any = true;
                bytes += d.bytes();
                maxRun = Math.max(maxRun, j.runtimeNanos());
                minRun = Math.min(minRun, j.runtimeNanos());
                double bw = j.runtimeNanos() > 0 ? d.bytes() * 1e9 / j.runtimeNanos() : 0;
                minBw = Math.min(minBw, bw);
                maxBw = Math.max(maxBw, bw);
            }
            if (!any) {
                continue;
            }
            double agg = maxRun > 0 ? bytes * 1e9 / maxRun : 0;
            out.append(String.format(Locale.ROOT, "%7s: bw=%s/s (%s/s), %s/s-%s/s (%s/s-%s/s), io=%s (%s), "
                    + "run=%d-%dmsec%n", dir == 0 ? "READ" : "WRITE", iec(agg), si(agg), iec(minBw), iec(maxBw),
                    si(minBw), si(maxBw), iec(bytes), si(bytes), millis(minRun), millis(maxRun)));
        }
    }

    static long millis(long nanos) {
        return Math.round(nanos / 1e6);
    }

    /** Bytes with IEC units, fio's num2str with 4 digits: "4096MiB", "11.5MiB", "133MiB". */
    static String iec(double bytes) {
        return num2str(bytes, 4, 1024, new String[] {"B", "KiB", "MiB", "GiB", "TiB", "PiB"});
    }

    /** Bytes with SI units: "139MB", "12.6MB". */
    static String si(double bytes) {
        return num2str(bytes, 4, 1000, new String[] {"B", "kB", "MB", "GB", "TB", "PB"});
    }

    /**
     * fio's num2str: divide by {@code base} while the integer part has more than {@code digits} digits;
     * after a division, use the digits left (one going to the point) for decimals.
     */
    static String num2str(double value, int digits, int base, String[] units) {
        double v = Math.max(0, value);
        int unit = 0;
        double limit = Math.pow(10, digits);
        while (v >= limit && unit < units.length - 1) {
            v /= base;
            unit++;
        }
        if (unit == 0) {
            return (long) Math.floor(v) + units[0];
        }
        int intDigits = Long.toString((long) Math.floor(v)).length();
        int decimals = digits - intDigits - 1;
        if (decimals <= 0) {
            return (long) Math.floor(v) + units[unit];
        }
        double scale = Math.pow(10, decimals);
        return String.format(Locale.ROOT, "%." + decimals + "f", Math.floor(v * scale) / scale) + units[unit];
    }
}
