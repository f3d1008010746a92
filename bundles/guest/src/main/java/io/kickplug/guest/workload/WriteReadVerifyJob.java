package io.kickplug.guest.workload;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.engine.GuestBuffer;
import io.kickplug.guest.engine.GuestJob;
import io.kickplug.guest.engine.IoCallback;
import io.kickplug.guest.engine.IoOp;
import io.kickplug.guest.engine.Vcpu;
import java.nio.ByteBuffer;
import java.util.ArrayDeque;

/**
 * One direction of a write-read-verify pass on one vCPU: the blocks {@code first, first + stride, ...} of the
 * first {@code total} bytes, written with their {@link BlockPattern} or read back and compared, keeping at most
 * {@code depth} requests in flight.
 */
final class WriteReadVerifyJob implements GuestJob {
    private final BlockPattern pattern;
    private final boolean write;
    private final int blockSize;
    private final long total;
    private final long blocks;
    private final long stride;
    private final int depth;
    private final ArrayDeque<GuestBuffer> buffers = new ArrayDeque<>();
    private final byte[] data;
    private final byte[] scratch;
    private long next;
    private int inFlight;
    private long mismatches;
    private long completed;

    WriteReadVerifyJob(BlockPattern pattern, boolean write, int blockSize, long total, long first, long stride,
            int depth) {
        this.pattern = pattern;
        this.write = write;
        this.blockSize = blockSize;
        this.total = total;
        this.blocks = (total + blockSize - 1) / blockSize;
        this.next = first;
        this.stride = stride;
        this.depth = depth;
        this.data = new byte[blockSize];
        this.scratch = new byte[blockSize];
    }

    @Override
    public void start(Vcpu v) {
        v.allocateBuffers(depth, blockSize, buffers);
    }

    @Override
    public boolean step(Vcpu v) {
        boolean submitted = false;
        while (next < blocks && inFlight < depth) {
            long block = next;
            next += stride;
            GuestBuffer buf = buffers.poll();
            long offset = block * blockSize;
            int length = (int) Math.min(blockSize, total - offset);
            if (write) {
                pattern.fill(block, data, length);
                buf.view().put(data, 0, length);
            }
            inFlight++;
            submitted = true;
            v.submit(write ? IoOp.WRITE : IoOp.READ, offset, length, buf, false,
                    (status, at) -> done(block, buf, length, status));
        }
        if (submitted) {
            v.commit();
        }
        return next < blocks;
    }

    private void done(long block, GuestBuffer buf, int length, int status) {
        inFlight--;
        if (status != VirtioBlk.S_OK) {
            throw new GuestDriverException((write ? "write" : "read") + " of " + length + " bytes at sector "
                    + block * blockSize / VirtioBlk.SECTOR_SIZE + " failed: status " + statusName(status));
        }
        if (!write) {
            ByteBuffer view = buf.view();
            view.get(data, 0, length);
            if (!pattern.matches(block, data, length, scratch)) {
                mismatches++;
            }
        }
        completed++;
        buffers.push(buf);
    }

    @Override
    public void finish(Vcpu v) {
    }

    long mismatches() {
        return mismatches;
    }

    long completed() {
        return completed;
    }

    /** "OK", "IOERR", "UNSUPP", or the raw value for anything else. */
    static String statusName(int status) {
        return switch (status) {
            case VirtioBlk.S_OK -> "OK";
            case VirtioBlk.S_IOERR -> "IOERR";
            case VirtioBlk.S_UNSUPP -> "UNSUPP";
            case IoCallback.DRIVER_FAILED -> "failed by the driver";
            default -> "unknown status " + status;
        };
    }

    /** A flush of the device's volatile cache (VIRTIO_BLK_T_FLUSH, section 5.2.6.1), between the two phases. */
    static final class Flush implements GuestJob {
        @Override
        public void start(Vcpu v) {
            v.submit(IoOp.FLUSH, 0, 0, null, false, (status, at) -> {
                if (status != VirtioBlk.S_OK) {
                    throw new GuestDriverException("flush failed: status " + statusName(status));
                }
            });
            v.commit();
        }

        @Override
        public boolean step(Vcpu v) {
            return false;
        }

        @Override
        public void finish(Vcpu v) {
        }
    }
}
