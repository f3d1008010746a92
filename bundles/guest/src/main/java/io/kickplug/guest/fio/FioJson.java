package io.kickplug.guest.fio;

import io.kickplug.api.text.JsonText;
import java.util.List;
import java.util.Locale;

/**
 * {@code --output-format=json} with fio's field names and units, written by hand: top-level
 * "fio version", "timestamp", "timestamp_ms", "time", "jobs"; per job "jobname", "groupid", "error",
 * "job options", "read"/"write"/"trim" with "io_bytes", "io_kbytes", "bw_bytes", "bw" (KiB/s), "iops",
 * "runtime" (msec), "total_ios", "short_ios", "drop_ios", "slat_ns"/"clat_ns"/"lat_ns" ({"min", "max",
 * "mean", "stddev", "N"}, clat_ns with "percentile": {"1.000000": ns, ...}), then "job_runtime",
 * "usr_cpu", "sys_cpu". Two additions fio does not have and fio tooling ignores: top-level "kickplug"
 * (the guest settings and counters) and per job "errors" (the failure lines).
 */
public final class FioJson {

    public static final String VERSION = "fio-kickplug-0.1.0";

    private FioJson() {
    }

    public static String format(FioReport report) {
        StringBuilder o = new StringBuilder(4096);
        o.append("{\n");
        field(o, 1, "fio version", JsonText.quote(VERSION), true);
        field(o, 1, "timestamp", Long.toString(report.time().toEpochSecond()), true);
        field(o, 1, "timestamp_ms", Long.toString(report.time().toInstant().toEpochMilli()), true);
        field(o, 1, "time", JsonText.quote(FioText.CTIME.format(report.time())), true);
        FioReport.GuestInfo g = report.guest();
        o.append(indent(1)).append("\"kickplug\" : {\n");
        field(o, 2, "disk", JsonText.quote(g.disk()), true);
        field(o, 2, "capacity_bytes", Long.toString(g.capacityBytes()), true);
        field(o, 2, "vcpus", Integer.toString(g.vcpus()), true);
        field(o, 2, "queues", Integer.toString(g.queues()), true);
        field(o, 2, "exit_latency_ns", Long.toString(g.exitLatencyNs()), true);
        field(o, 2, "inject_latency_ns", Long.toString(g.injectLatencyNs()), true);
        field(o, 2, "kick_policy", JsonText.quote(g.kickPolicy()), true);
        field(o, 2, "notifies", Long.toString(g.notifies()), true);
        field(o, 2, "interrupts", Long.toString(g.interrupts()), true);
        field(o, 2, "iothread_cpu_ns", Long.toString(g.deviceCpuNanos()), false);
        o.append(indent(1)).append("},\n");
        o.append(indent(1)).append("\"jobs\" : [\n");
        List<JobResult> reported = report.reported();
        for (int i = 0; i < reported.size(); i++) {
            JobResult r = reported.get(i);
            JobSpec spec = specFor(report, r);
            o.append(indent(2)).append("{\n");
            field(o, 3, "jobname", JsonText.quote(r.name()), true);
            field(o, 3, "groupid", Integer.toString(r.groupId()), true);
            field(o, 3, "error", Integer.toString(r.error()), true);
            o.append(indent(3)).append("\"errors\" : [");
            List<String> errors = r.errors();
            for (int e = 0; e < errors.size(); e++) {
                o.append(e == 0 ? "" : ", ").append(JsonText.quote(errors.get(e)));
            }
            o.append("],\n");
            jobOptions(o, spec, r.jobs());
            direction(o, "read", r.read(), r.runtimeNanos());
            direction(o, "write", r.write(), r.runtimeNanos());
            direction(o, "trim", new DirectionStats(), 0);
            field(o, 3, "job_runtime", Long.toString(FioText.millis(r.runtimeNanos())), true);
            field(o, 3, "usr_cpu", num(r.usrPercent()), true);
            field(o, 3, "sys_cpu", num(r.sysPercent()), false);
            o.append(indent(2)).append(i == reported.size() - 1 ? "}\n" : "},\n");
        }
        o.append(indent(1)).append("]\n");
        o.append("}\n");
        return o.toString();
    }

    private static JobSpec specFor(FioReport report, JobResult r) {
        for (JobSpec s : report.specs()) {
            if (s.name().equals(r.name())) {
                return s;
            }
        }
        return report.specs().get(0);
    }

    private static void jobOptions(StringBuilder o, JobSpec s, int jobs) {
        o.append(indent(3)).append("\"job options\" : {\n");
        field(o, 4, "name", JsonText.quote(s.name()), true);
        if (s.filename() != null) {
            field(o, 4, "filename", JsonText.quote(s.filename()), true);
        }
        field(o, 4, "rw", JsonText.quote(s.rw().fioName()), true);
        String bs = s.fixedBlockSize() ? Integer.toString(s.bsMin()) : s.bsMin() + "-" + s.bsMax();
        field(o, 4, "bs", JsonText.quote(bs), true);
        field(o, 4, "ioengine", JsonText.quote(s.ioengine().fioName()), true);
        field(o, 4, "iodepth", JsonText.quote(Integer.toString(s.iodepth())), true);
        if (s.verify() != VerifyKind.NONE) {
            field(o, 4, "verify", JsonText.quote(s.verify().fioName()), true);
        }
        field(o, 4, "numjobs", JsonText.quote(Integer.toString(s.numjobs())), false);
        o.append(indent(3)).append("},\n");
    }

    private static void direction(StringBuilder o, String name, DirectionStats d, long runtimeNanos) {
        double seconds = runtimeNanos / 1e9;
        boolean any = d.ios() > 0 && seconds > 0;
        double bwBytes = any ? d.bytes() / seconds : 0;
        o.append(indent(3)).append('"').append(name).append("\" : {\n");
        field(o, 4, "io_bytes", Long.toString(d.bytes()), true);
        field(o, 4, "io_kbytes", Long.toString(d.bytes() / 1024), true);
        field(o, 4, "bw_bytes", Long.toString((long) bwBytes), true);
        field(o, 4, "bw", Long.toString((long) (bwBytes / 1024)), true);
        field(o, 4, "iops", num(any ? d.ios() / seconds : 0), true);
        field(o, 4, "runtime", Long.toString(d.ios() > 0 ? FioText.millis(runtimeNanos) : 0), true);
        field(o, 4, "total_ios", Long.toString(d.ios()), true);
        field(o, 4, "short_ios", "0", true);
        field(o, 4, "drop_ios", "0", true);
        latency(o, "slat_ns", d.slat(), false, true);
        latency(o, "clat_ns", d.clat(), true, true);
        latency(o, "lat_ns", d.lat(), false, false);
        o.append(indent(3)).append("},\n");
    }

    private static void latency(StringBuilder o, String name, LatencyStat s, boolean percentiles, boolean comma) {
        o.append(indent(4)).append('"').append(name).append("\" : {\n");
        field(o, 5, "min", Long.toString(s.min()), true);
        field(o, 5, "max", Long.toString(s.max()), true);
        field(o, 5, "mean", num(s.mean()), true);
        field(o, 5, "stddev", num(s.stddev()), true);
        field(o, 5, "N", Long.toString(s.count()), percentiles && s.count() > 0);
        if (percentiles && s.count() > 0) {
            o.append(indent(5)).append("\"percentile\" : {\n");
            double[] ps = LatencyStat.FIO_PERCENTILES;
            for (int i = 0; i < ps.length; i++) {
                field(o, 6, String.format(Locale.ROOT, "%f", ps[i]), Long.toString(s.percentile(ps[i])),
                        i < ps.length - 1);
            }
            o.append(indent(5)).append("}\n");
        }
        o.append(indent(4)).append(comma ? "},\n" : "}\n");
    }

    private static void field(StringBuilder o, int level, String key, String value, boolean comma) {
        o.append(indent(level)).append(JsonText.quote(key)).append(" : ").append(value).append(comma ? ",\n" : "\n");
    }

    private static String indent(int level) {
        return "  ".repeat(level);
    }

    /** A JSON number: finite, six decimals as fio prints doubles. */
    static String num(double v) {
        if (Double.isNaN(v) || Double.isInfinite(v)) {
            return "0.000000";
        }
        return String.format(Locale.ROOT, "%.6f", v);
    }
}
