package io.kickplug.guest.fio;

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

    /** fio's default seed with randrepeat=1 (fio's FIO_RANDSEED). */
    public static final long DEFAULT_SEED = 0xb1899bedL;

    /** Options that fio knows and that change nothing here; accepted so that existing job files run. */
    public static final Set<String> IGNORED = Set.of("description", "thread", "invalidate", "fadvise_hint");

    /** Every option name (aliases included) that {@link #set} accepts, for help and for tests. */
    public static final List<String> NAMES = List.of("name", "filename", "rw", "readwrite", "rwmixread",
            "rwmixwrite", "bs", "blocksize", "bsrange", "blocksize_range", "size", "offset", "iodepth",
            "iodepth_batch_submit", "iodepth_batch", "numjobs",
            "runtime", "timeout", "time_based", "ramp_time", "ioengine", "hipri", "direct", "buffered",
            "group_reporting", "verify", "do_verify", "verify_only", "randseed", "seed", "randrepeat", "norandommap", "loops", "description",
            "thread", "invalidate", "fadvise_hint");

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
            default -> throw new FioOptionException("unknown fio option '" + option.trim() + "'");
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
