package io.kickplug.guest.testing;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtioFeatures;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * A tiny in-test virtio-blk device over a byte array, served by one I/O thread: enough to run the
 * simulated guest end to end through the real MMIO transport, with switches for the failures a driver
 * must survive.
 */
public final class RamDiskDevice implements VirtioDevice, AutoCloseable {

    public final byte[] disk;
    public final long offered;
    private final int queues;
    private final int maxQueueSize;
    private final ByteBuffer config = ByteBuffer.allocate(VirtioBlk.CONFIG_SIZE).order(ByteOrder.LITTLE_ENDIAN);
    private final ExecutorService io = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "ramdisk-io");
        t.setDaemon(true);
        return t;
    });
    private volatile DeviceActivation activation;

    /** Requests handled per queue. */
    public final AtomicLongArray handled;
    /** Answer IOERR for requests at this sector (-1: none). */
    public volatile long ioErrorSector = -1;
    /** Flip the first data byte of reads at this sector (-1: none). */
    public volatile long corruptReadSector = -1;
    /** Latch DEVICE_NEEDS_RESET on a request at this sector (-1: none). */
    public volatile long faultSector = -1;
    /** Take chains but never complete them. */
    public volatile boolean swallow;
    public volatile int resets;

    public RamDiskDevice(int capacityBytes, int queues, int maxQueueSize, long offered) {
        this.disk = new byte[capacityBytes];
        this.queues = queues;
        this.maxQueueSize = maxQueueSize;
        this.offered = offered;
        this.handled = new AtomicLongArray(queues);
        config.putLong(VirtioBlk.CFG_CAPACITY, capacityBytes / VirtioBlk.SECTOR_SIZE);
        config.putShort(VirtioBlk.CFG_NUM_QUEUES, (short) queues);
        config.putInt(VirtioBlk.CFG_SEG_MAX, 1);
    }

    /** VERSION_1, INDIRECT_DESC, EVENT_IDX, FLUSH, SEG_MAX and MQ. */
    public static long fullFeatures() {
        return VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC | VirtioFeatures.RING_EVENT_IDX
                | VirtioBlk.F_FLUSH | VirtioBlk.F_SEG_MAX | VirtioBlk.F_MQ;
    }

    @Override
    public int deviceId() {
        return DeviceIds.BLOCK;
    }

    @Override
    public long offeredFeatures() {
        return offered;
    }

    @Override
    public int queueCount() {
        return queues;
    }

    @Override
    public int maxQueueSize() {
        return maxQueueSize;
    }

    @Override
    public int configSize() {
        return VirtioBlk.CONFIG_SIZE;
    }

    @Override
    public synchronized long readConfig(int offset, int width) {
        return switch (width) {
            case 1 -> config.get(offset) & 0xFF;
            case 2 -> config.getShort(offset) & 0xFFFF;
            case 4 -> config.getInt(offset) & 0xFFFF_FFFFL;
            case 8 -> config.getLong(offset);
            default -> 0;
        };
    }

    @Override
    public void writeConfig(int offset, int width, long value) {
    }

    @Override
    public void activate(DeviceActivation a) {
        activation = a;
    }

    @Override
    public void reset() {
        activation = null;
        resets++;
        // Wait for the I/O thread to finish whatever it is doing (section 2.4).
        try {
            io.submit(() -> { }).get(5, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("I/O thread did not quiesce", e);
        }
    }

    @Override
    public void queueNotify(int queueIndex) {
        io.execute(() -> drain(queueIndex));
    }

    private void drain(int index) {
        DeviceActivation a = activation;
        if (a == null) {
            return;
        }
        DeviceQueue q = a.queues().get(index);
        if (q == null || q.isBroken()) {
            return;
        }
        try {
            boolean pushed = false;
            do {
                q.disableNotification();
                DescriptorChain chain;
                while ((chain = q.pop()) != null) {
                    pushed |= handle(a, q, chain);
                    if (a.signals().needsReset()) {
                        return;
                    }
                }
            } while (q.enableNotification());
            if (pushed && q.needsNotification()) {
                a.signals().usedBuffer(index);
            }
        } catch (GuestFaultException e) {
            a.signals().deviceError(e);
        }
    }

    private boolean handle(DeviceActivation a, DeviceQueue q, DescriptorChain chain) {
        ChainReader in = chain.reader();
        int type = in.readU32();
        in.readU32();
        long sector = in.readU64();
        handled.incrementAndGet(q.index());
        if (sector == faultSector) {
            a.signals().deviceError(new GuestFaultException("5.2.6.2", "test device refuses sector " + sector));
            return false;
        }
        if (swallow) {
            return false;
        }
        ChainWriter out = chain.writer();
        int offset = (int) (sector * VirtioBlk.SECTOR_SIZE);
        int written = 1;
        int status = sector == ioErrorSector ? VirtioBlk.S_IOERR : VirtioBlk.S_OK;
        if (status == VirtioBlk.S_OK) {
            switch (type) {
                case VirtioBlk.T_OUT -> in.read(disk, offset, (int) in.remaining());
                case VirtioBlk.T_IN -> {
                    int length = (int) out.remaining() - 1;
                    byte[] data = java.util.Arrays.copyOfRange(disk, offset, offset + length);
                    if (sector == corruptReadSector) {
                        data[0] ^= 1;
                    }
                    out.write(data, 0, length);
                    written += length;
                }
                case VirtioBlk.T_FLUSH -> {
                }
                default -> status = VirtioBlk.S_UNSUPP;
            }
        }
        out.skip(out.remaining() - 1);
        out.writeU8(status);
        q.pushUsed(chain.head(), written);
        return true;
    }

    @Override
    public void close() {
        io.shutdownNow();
    }
}
