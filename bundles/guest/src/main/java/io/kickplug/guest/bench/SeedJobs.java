package io.kickplug.guest.bench;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The seeds' fio job files, disks, point parameters and figures, and the report files they write. */
final class SeedJobs {

    private SeedJobs() {
    }

    static DiskSpec nullDisk(String name, int queues, int ioThreads, TrackedLockKind kind) {
        return DiskSpec.memory(name, SeedsBench.NULL_DISK_BYTES)
                .withBackend(new BackendSpec("null", null, SeedsBench.NULL_DISK_BYTES, false))
                .withQueues(queues, DiskSpec.DEFAULT_QUEUE_SIZE).withIoThreads(ioThreads, List.of())
                .withTrackedLock(kind);
    }

    /** A fio job file: direct 4k I/O, group reporting, time-based for {@code runtime}. */
    static String jobFile(String name, String rw, String ioengine, int iodepth, int numjobs, Boolean hipri,
            long runtime) {
        StringBuilder t = new StringBuilder("[global]\ndirect=1\nbs=4k\n");
        t.append("ioengine=").append(ioengine).append('\n');
        t.append("iodepth=").append(iodepth).append('\n');
        t.append("numjobs=").append(numjobs).append('\n');
        t.append("group_reporting=1\n");
        if (hipri != null) {
            t.append("hipri=").append(hipri ? 1 : 0).append('\n');
        }
        t.append("runtime=").append(Math.max(1, runtime / 1000)).append("us\ntime_based\n");
        t.append('[').append(name).append("]\nrw=").append(rw).append('\n');
        return t.toString();
    }

    /** The parameters every point states, in print order. */
    static Map<String, String> params(int vcpus, int numjobs, int iodepth, String bs, String rw, String ioengine,
            int queues, int ioThreads, long exitNs, long injectNs, String backend, long runtime) {
        Map<String, String> p = new LinkedHashMap<>();
        p.put("vcpus", Integer.toString(vcpus));
        p.put("numjobs", Integer.toString(numjobs));
        p.put("iodepth", Integer.toString(iodepth));
        p.put("bs", bs);
        p.put("rw", rw);
        p.put("ioengine", ioengine);
        p.put("queues", Integer.toString(queues));
        p.put("iothreads", Integer.toString(ioThreads));
        p.put("exit", micros(exitNs) + "us");
        p.put("inject", micros(injectNs) + "us");
        p.put("backend", backend);
        p.put("runtime", SeedsFormat.seconds(runtime));
        return p;
    }

    static String micros(long nanos) {
        return nanos % 1000 == 0 ? Long.toString(nanos / 1000) : String.format(Locale.ROOT, "%.3f", nanos / 1e3);
    }

    /**
     * Seed 003's figures that both benches report first: the IOPS change from hipri=0 to hipri=1 in percent, then
     * each side's IOPS and mean latency.
     */
    static Map<String, Double> hipriFigures(double changePct, double irqIops, double pollIops, double irqLatMeanUs,
            double pollLatMeanUs) {
        return figures("iops_change_pct", changePct, "hipri0_iops", irqIops, "hipri1_iops", pollIops,
                "hipri0_lat_mean_us", irqLatMeanUs, "hipri1_lat_mean_us", pollLatMeanUs);
    }

    static Map<String, Double> figures(Object... pairs) {
        Map<String, Double> m = new LinkedHashMap<>();
        for (int i = 0; i < pairs.length; i += 2) {
            m.put((String) pairs[i], ((Number) pairs[i + 1]).doubleValue());
        }
        return m;
    }
}
