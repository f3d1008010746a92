package io.kickplug.guest.fio;

import io.kickplug.api.command.OptionTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/**
 * The options of one job section (or of [global]) while they are being read: each {@link #set} checks
 * the option name and the value's syntax at once, {@link #expand} checks how the options fit together and
 * makes one {@link JobSpec} per {@code numjobs} clone. A job starts as a {@link #copy} of the [global]
 * options above it, as in fio.
 */
public final class JobOptions implements Cloneable {

    private static OptionTable.Option valued(String name, String value, String defaultValue, String description) {
        return OptionTable.Option.valued(name, value, defaultValue, description);
    }

    /** fio's default seed with randrepeat=1 (fio's FIO_RANDSEED). */
    public static final long DEFAULT_SEED = 0xb1899bedL;

    /** Options that fio knows and that change nothing here; accepted so that existing job files run. */
    public static final Set<String> IGNORED = Set.of("description", "thread", "invalidate", "fadvise_hint");

    /**
     * Every job option (aliases included) that {@link #set} accepts, as {@code kp:fio} writes it ({@code --rw=...});
     * a job file has the same keys without {@code --}. {@link #set} refuses any other, and the command reference
     * lists these. docs/reference/fio.md says more about each.
     */
    public static final OptionTable TABLE = new OptionTable("DISK [--output-format=F] [--html=FILE] --KEY=VALUE...",
            "jobs given as fio options, --KEY=VALUE (a job file has the same keys without --): the options before the "
            + "first --name= apply to every job, as [global]; each --name= starts a job; a boolean option alone "
            + "(--time_based) means 1",
            valued("--name", "NAME", "fio", "job name; each --name= starts a job"),
            valued("--filename", "FILE", "the disk", "/dev/vd*, the disk's name or none: the disk (any other is "
                    + "an error)"),
            valued("--rw", "MODE", "read", "read, write, randread, randwrite, rw (readwrite) or randrw")
                    .alias("--readwrite"),
            valued("--rwmixread", "PCT", "50", "read share of rw and randrw, in percent"),
            valued("--rwmixwrite", "PCT", "50", "write share of rw and randrw (100 - rwmixread)"),
            valued("--bs", "SIZE", "4k", "block size, a multiple of 512 (one size: 4k,8k is refused)")
                    .alias("--blocksize"),
            valued("--bsrange", "LOW-HIGH", "", "block sizes drawn per I/O, e.g. 4k-64k (or 4k:64k)")
                    .alias("--blocksize_range"),
            valued("--size", "SIZE|N%", "the disk from offset on", "bytes per job, or a share of the disk"),
            valued("--offset", "SIZE|N%", "0", "start of the job's region"),
            valued("--iodepth", "N", "1", "I/Os in flight for libaio and io_uring, 1 to 65536 (sync engines use 1)"),
            valued("--iodepth_batch_submit", "N", "1", "I/Os per submission (one kick decision each); 0: iodepth")
                    .alias("--iodepth_batch"),
            valued("--numjobs", "N", "1", "clones of the job, each with its own random seed (1 to 1024)"),
            valued("--runtime", "TIME", "", "how long after the ramp (10, 500ms, 2m); without time_based a job "
                    + "also ends when its region is done loops times").alias("--timeout"),
            valued("--time_based", "0|1", "0", "repeat the region until the runtime has passed"),
            valued("--ramp_time", "TIME", "0", "run this long before the statistics start"),
            valued("--ioengine", "ENGINE", "psync", "libaio or io_uring (iodepth I/Os in flight), psync, sync or "
                    + "pvsync2 (one at a time)"),
            valued("--hipri", "0|1", "0", "polled completions (io_uring, pvsync2): the vCPU spins on the used ring "
                    + "(poll queues: kp:guest --poll-queues)"),
            valued("--direct", "0|1", "0", "accepted: the simulated guest has no page cache, all I/O is direct"),
            valued("--buffered", "0|1", "1", "accepted, as direct"),
            valued("--group_reporting", "0|1", "0", "report all jobs of group 0 as one"),
            valued("--verify", "crc32c|md5|0", "0", "a checksummed header in every written block, read back after "
                    + "the writes; reads check what they read (crc32c-intel: crc32c)"),
            valued("--do_verify", "0|1", "1", "0: write the verify headers but skip the read-back"),
            valued("--verify_only", "0|1", "0", "no writes: verify what a writing job would have written (needs "
                    + "verify)"),
            valued("--randseed", "N", "fio's fixed seed", "seed of offsets, sizes, mix and verify data")
                    .alias("--seed"),
            valued("--randrepeat", "0|1", "1", "0: seed from the clock instead"),
            valued("--norandommap", "0|1", "0", "draw random offsets independently (blocks repeat, others are "
                    + "missed)"),
            valued("--loops", "N", "1", "passes over the region when not time based"),
            valued("--description", "TEXT", "", "accepted and ignored"),
            valued("--thread", "0|1", "", "accepted and ignored"),
            valued("--invalidate", "0|1", "", "accepted and ignored"),
            valued("--fadvise_hint", "0|1", "", "accepted and ignored"));

    /** Every option name (aliases included) that {@link #set} accepts, without {@code --}: {@link #TABLE}'s. */
    public static final List<String> NAMES = TABLE.options().stream().flatMap(o -> o.names().stream())
            .map(n -> n.substring(2)).toList();

    private String name;
    private String filename;
    private RwMode rw = RwMode.READ;
    private int rwmixread = 50;
    private int bsMin = 4096;
    private int bsMax = 4096;
    private long size;
    private int sizePercent;
    private long offset;
    private int offsetPercent = -1;
    private int iodepth = 1;
    private int iodepthBatch = 1;
    private int numjobs = 1;
    private long runtimeNanos;
    private boolean timeBased;
    private long rampNanos;
    private IoEngine ioengine = IoEngine.PSYNC;
    private boolean hipri;
    private boolean direct;
    private boolean groupReporting;
    private VerifyKind verify = VerifyKind.NONE;
    private Long randseed;
    private boolean randrepeat = true;
    private boolean norandommap;
    private int loops = 1;
    private boolean doVerify = true;
    private boolean verifyOnly;

    /** A copy to start a job from: every field is a primitive or immutable, so the copy shares nothing. */
    public JobOptions copy() {
        try {
            return (JobOptions) super.clone();
        } catch (CloneNotSupportedException e) {
            throw new AssertionError("JobOptions is Cloneable", e);
        }
    }

    public String name() {
        return name;
    }

    /**
     * Applies one option; {@code value} is {@code null} for a bare option ("time_based").
     *
     * @throws FioOptionException for an unknown option or a bad value
     */
    public JobOptions set(String option, String value) {
        String key = option.trim().toLowerCase(Locale.ROOT);
        if (!TABLE.has("--" + key)) {
            throw new FioOptionException("unknown fio option '" + option.trim() + "'");
        }
        if (IGNORED.contains(key)) {
            return this;
        }
        switch (key) {
            case "name" -> name = required(key, value);
            case "filename" -> filename = required(key, value);
            case "rw", "readwrite" -> rw = RwMode.parse(required(key, value));
            case "rwmixread" -> rwmixread = FioValues.integer(key, required(key, value), 0, 100);
            case "rwmixwrite" -> rwmixread = 100 - FioValues.integer(key, required(key, value), 0, 100);
            case "bs", "blocksize" -> {
                String v = required(key, value);
                if (v.contains(",")) {
                    throw FioValues.bad(key, v, "separate read,write block sizes are not supported; give one size");
                }
                bsMin = bsMax = blockSize(key, v, v);
            }
            case "bsrange", "blocksize_range" -> {
                String v = required(key, value);
                String[] ends = v.split("[-:]", -1);
                if (ends.length != 2 || v.contains(",")) {
                    throw FioValues.bad(key, v, "expected low-high, such as 4k-64k");
                }
                int lo = blockSize(key, ends[0], v);
                int hi = blockSize(key, ends[1], v);
                if (lo > hi) {
                    throw FioValues.bad(key, v, "the low end is above the high end");
                }
                bsMin = lo;
                bsMax = hi;
            }
            case "size" -> {
                String v = required(key, value);
                if (FioValues.isPercent(v)) {
                    sizePercent = FioValues.percent(key, v, false);
                    size = 0;
                } else {
                    size = FioValues.size(key, v);
                    sizePercent = 0;
                    if (size == 0) {
                        throw FioValues.bad(key, v, "size must be positive");
                    }
                }
            }
            case "offset" -> {
                String v = required(key, value);
                if (FioValues.isPercent(v)) {
                    offsetPercent = FioValues.percent(key, v, true);
                    offset = 0;
                } else {
                    offset = FioValues.size(key, v);
                    offsetPercent = -1;
                }
            }
            case "iodepth" -> {
                String v = required(key, value);
                iodepth = FioValues.integer(key, v, Integer.MIN_VALUE, Integer.MAX_VALUE);
                if (iodepth < 1 || iodepth > 65536) {
                    throw FioValues.bad(key, v, "iodepth must be from 1 to 65536");
                }
            }
            // fio: "defaults to 1 which means that we submit each I/O as soon as it is available"; 0 means iodepth.
            case "iodepth_batch_submit", "iodepth_batch" ->
                    iodepthBatch = FioValues.integer(key, required(key, value), 0, 65536);
            case "numjobs" -> numjobs = FioValues.integer(key, required(key, value), 1, 1024);
            case "runtime", "timeout" -> runtimeNanos = FioValues.timeNanos(key, required(key, value));
            case "time_based" -> timeBased = FioValues.bool(key, value);
            case "ramp_time" -> rampNanos = FioValues.timeNanos(key, required(key, value));
            case "ioengine" -> ioengine = IoEngine.parse(required(key, value));
            case "hipri" -> hipri = FioValues.bool(key, value);
            case "direct" -> direct = FioValues.bool(key, value);
            case "buffered" -> direct = !FioValues.bool(key, value);
            case "group_reporting" -> groupReporting = FioValues.bool(key, value);
            case "verify" -> verify = VerifyKind.parse(required(key, value));
            case "do_verify" -> doVerify = FioValues.bool(key, value);
            case "verify_only" -> verifyOnly = FioValues.bool(key, value);
            case "randseed", "seed" -> randseed = FioValues.unsignedLong(key, required(key, value));
            case "randrepeat" -> randrepeat = FioValues.bool(key, value);
            case "norandommap" -> norandommap = FioValues.bool(key, value);
            case "loops" -> loops = FioValues.integer(key, required(key, value), 1, Integer.MAX_VALUE);
            default -> throw new IllegalStateException("fio option " + key + " is in the table but not handled");
        }
        return this;
    }

    private static String required(String key, String value) {
        if (value == null || value.isBlank()) {
            throw new FioOptionException("option " + key + " needs a value (" + key + "=...)");
        }
        return value.trim();
    }

    private static int blockSize(String key, String text, String whole) {
        long bytes = FioValues.size(key, text);
        if (bytes <= 0 || bytes % 512 != 0) {
            throw FioValues.bad(key, whole, "block size " + bytes + " is not a positive multiple of 512");
        }
        if (bytes > (1 << 30)) {
            throw FioValues.bad(key, whole, "block size " + bytes + " is above 1 GiB");
        }
        return (int) bytes;
    }

    /**
     * Checks how the options fit together and makes the job's clones.
     *
     * @param sectionName the job's name when no {@code name=} was given
     * @param firstJobNumber the {@link JobSpec#jobNumber()} of the first clone
     */
    public List<JobSpec> expand(String sectionName, int firstJobNumber) {
        String jobName = name != null ? name : sectionName;
        if (hipri && !ioengine.hipriCapable()) {
            throw new FioOptionException("job '" + jobName + "': hipri is an option of io_uring and pvsync2,"
                    + " not of ioengine=" + ioengine.fioName());
        }
        if (timeBased && runtimeNanos == 0) {
            throw new FioOptionException("job '" + jobName + "': time_based needs a runtime");
        }
        if (verify != VerifyKind.NONE && rw.random() && rw.writes() && bsMin != bsMax) {
            throw new FioOptionException("job '" + jobName + "': verify with random writes needs one block size,"
                    + " not bsrange " + bsMin + "-" + bsMax + " (overlapping writes would overwrite verified blocks)");
        }
        if (verifyOnly && verify == VerifyKind.NONE) {
            throw new FioOptionException("job '" + jobName + "': verify_only needs verify= (the checksum the data"
                    + " was written with)");
        }
        if (verifyOnly && rw.writes() && timeBased) {
            throw new FioOptionException("job '" + jobName + "': verify_only cannot replay a time_based write job"
                    + " (which blocks it wrote depends on time); use size= and loops=");
        }
        if (offsetPercent < 0 && offset % 512 != 0) {
            throw new FioOptionException("job '" + jobName + "': offset " + offset + " is not a multiple of 512");
        }
        if (size % 512 != 0) {
            throw new FioOptionException("job '" + jobName + "': size " + size + " is not a multiple of 512");
        }
        long baseSeed = randseed != null ? randseed : randrepeat ? DEFAULT_SEED : System.nanoTime();
        List<JobSpec> jobs = new ArrayList<>(numjobs);
        for (int clone = 0; clone < numjobs; clone++) {
            int number = firstJobNumber + clone;
            // fio gives every job its own random state: the clones must not all hit the same blocks.
            long seed = baseSeed + 0x9E3779B97F4A7C15L * number;
            jobs.add(new JobSpec(jobName, number, clone, numjobs, filename, rw, rwmixread, bsMin, bsMax, size,
                    sizePercent, offset, offsetPercent, iodepth, iodepthBatch, runtimeNanos, timeBased, rampNanos, ioengine,
                    hipri, direct, groupReporting, verify, seed, norandommap, loops, doVerify, verifyOnly));
        }
        return jobs;
    }
}
