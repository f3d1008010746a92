package io.kickplug.guest.fio;

/**
 * One fio job as it runs: what a job section (with its [global] defaults) or a {@code --name} group of
 * command-line options says, after {@code numjobs} expansion (each clone is its own JobSpec, with the same
 * name, as fio does).
 *
 * @param name the job (section) name
 * @param jobNumber 0-based position among all expanded jobs of the run
 * @param cloneIndex 0-based index among the {@code numjobs} clones of the same section
 * @param numjobs the section's {@code numjobs}
 * @param filename as given ({@code null}: the disk under test); see {@link FioTarget}
 * @param rw the I/O pattern
 * @param rwmixread percentage of reads in a mixed pattern (rw, randrw)
 * @param bsMin smallest block size in bytes (bs, or bsrange's low end), a multiple of 512
 * @param bsMax largest block size in bytes (bs, or bsrange's high end)
 * @param size bytes of the region (0: unset, the rest of the disk from offset)
 * @param sizePercent region as a percentage of the disk (0: unset)
 * @param offset first byte of the region
 * @param offsetPercent region start as a percentage of the disk (-1: unset)
 * @param iodepth requests in flight for asynchronous engines
 * @param iodepthBatch fio's iodepth_batch_submit: I/Os queued before they are submitted together (one commit,
 *     one blk-mq {@code last}); fio's default is 1, one submission per I/O as soon as it is ready
 * @param runtimeNanos run time after ramp (0: until the region is done, {@code loops} times)
 * @param timeBased keep going over the region until the runtime has passed
 * @param rampNanos time before statistics start
 * @param ioengine the I/O engine
 * @param hipri polled completions
 * @param direct accepted for compatibility; the simulated guest has no page cache, so all I/O is direct
 * @param groupReporting report the group as one
 * @param verify checksum of written blocks
 * @param randseed seed of random offsets, block sizes, read/write mix and verify data
 * @param norandommap random offsets without the per-pass map (blocks may repeat or be missed)
 * @param loops passes over the region when not time based
 * @param doVerify fio's do_verify: run the verify phase after a writing job's main phase (default true)
 * @param verifyOnly fio's verify_only: do not write; replay which blocks the write workload would have written
 *     with which data, and check that the disk still holds exactly that
 */
public record JobSpec(String name, int jobNumber, int cloneIndex, int numjobs, String filename, RwMode rw,
        int rwmixread, int bsMin, int bsMax, long size, int sizePercent, long offset, int offsetPercent,
        int iodepth, int iodepthBatch, long runtimeNanos, boolean timeBased, long rampNanos, IoEngine ioengine, boolean hipri,
        boolean direct, boolean groupReporting, VerifyKind verify, long randseed, boolean norandommap,
        int loops, boolean doVerify, boolean verifyOnly) {

    /** Requests this job keeps in flight: iodepth for asynchronous engines, 1 for synchronous ones. */
    public int effectiveDepth() {
        return ioengine.async() ? iodepth : 1;
    }

    /**
     * I/Os per submission (commit): {@code iodepth_batch_submit}, where 0 means the whole iodepth, capped at the
     * depth; 1 for synchronous engines.
     */
    public int effectiveBatch() {
        int depth = effectiveDepth();
        return iodepthBatch == 0 ? depth : Math.min(iodepthBatch, depth);
    }

    public boolean fixedBlockSize() {
        return bsMin == bsMax;
    }

    /**
     * The byte range this job works on, for a disk of {@code capacity} bytes.
     *
     * @throws FioOptionException when the range does not fit the disk
     */
    public Region region(String disk, long capacity) {
        long start = offsetPercent >= 0 ? align(capacity * offsetPercent / 100) : offset;
        if (start >= capacity) {
            throw new FioOptionException("job '" + name + "': offset " + start + " is not below the size "
                    + capacity + " of disk '" + disk + "'");
        }
        long length;
        if (sizePercent > 0) {
            length = align(capacity * sizePercent / 100);
        } else if (size > 0) {
            length = size;
        } else {
            length = capacity - start;
        }
        if (length > capacity - start) {
            throw new FioOptionException("job '" + name + "': size " + length + (start > 0 ? " from offset " + start : "")
                    + " is larger than disk '" + disk + "' (" + capacity + " bytes)");
        }
        if (length < bsMin) {
            throw new FioOptionException("job '" + name + "': size " + length + " is smaller than the block size "
                    + bsMin);
        }
        return new Region(start, length);
    }

    private long align(long bytes) {
        return bytes - bytes % bsMin;
    }

    /** A byte range of the disk. */
    public record Region(long start, long length) {
        public long end() {
            return start + length;
        }
    }
}
