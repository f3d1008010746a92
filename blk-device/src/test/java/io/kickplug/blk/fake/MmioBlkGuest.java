package io.kickplug.blk.fake;

import static io.kickplug.api.transport.MmioRegisters.DEVICE_FEATURES;
import static io.kickplug.api.transport.MmioRegisters.DEVICE_FEATURES_SEL;
import static io.kickplug.api.transport.MmioRegisters.DRIVER_FEATURES;
import static io.kickplug.api.transport.MmioRegisters.DRIVER_FEATURES_SEL;
import static io.kickplug.api.transport.MmioRegisters.INTERRUPT_ACK;
import static io.kickplug.api.transport.MmioRegisters.INTERRUPT_STATUS;
import static io.kickplug.api.transport.MmioRegisters.QUEUE_DESC_HIGH;
import static io.kickplug.api.transport.MmioRegisters.QUEUE_DESC_LOW;
import static io.kickplug.api.transport.MmioRegisters.QUEUE_DEVICE_HIGH;
import static io.kickplug.api.transport.MmioRegisters.QUEUE_DEVICE_LOW;
import static io.kickplug.api.transport.MmioRegisters.QUEUE_DRIVER_HIGH;
import static io.kickplug.api.transport.MmioRegisters.QUEUE_DRIVER_LOW;
import static io.kickplug.api.transport.MmioRegisters.QUEUE_NOTIFY;
import static io.kickplug.api.transport.MmioRegisters.QUEUE_NUM;
import static io.kickplug.api.transport.MmioRegisters.QUEUE_READY;
import static io.kickplug.api.transport.MmioRegisters.QUEUE_SEL;
import static io.kickplug.api.transport.MmioRegisters.STATUS;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.virtio.queue.SplitDriverQueue;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * A minimal simulated guest driving a virtio-blk device through a virtio-mmio register window: the
 * initialisation of section 3.1.1 and 4.2.3, split-ring driver queues, and an interrupt line that the
 * test waits on. Single-threaded, like one vCPU.
 */
public final class MmioBlkGuest {

    private static final int MAX_INDIRECT = 8;

    private final GuestPort port;
    private final RegisterWindow mmio;
    private final GuestMemory memory;
    private final Semaphore interrupts = new Semaphore(0);
    private final List<SplitDriverQueue> queues = new ArrayList<>();
    private long nextFree = 0x1000;
    private long features;

    public MmioBlkGuest(GuestPort port) {
        this.port = port;
        this.mmio = port.mmio();
        this.memory = port.memory();
        port.connectInterrupts(vector -> interrupts.release());
    }

    public GuestMemory memory() {
        return memory;
    }

    public long features() {
        return features;
    }

    public int status() {
        return (int) mmio.read(STATUS, 4);
    }

    public int interruptStatus() {
        return (int) mmio.read(INTERRUPT_STATUS, 4);
    }

    /** The ConfigGeneration register (section 2.5, 4.2.2). */
    public int configGeneration() {
        return (int) mmio.read(io.kickplug.api.transport.MmioRegisters.CONFIG_GENERATION, 4);
    }

    /** Acknowledges the InterruptStatus bits {@code bits} (section 4.2.2). */
    public void ackInterrupt(int bits) {
        mmio.write(INTERRUPT_ACK, 4, bits);
    }

    /** Writes the device configuration space. */
    public void writeConfig(int offset, int width, long value) {
        mmio.write(0x100 + offset, width, value);
    }

    /**
     * Submits one request on queue {@code q} and waits for it: the header, {@code out} as device-readable
     * data (if any), {@code inLength} device-writable data bytes, and the status byte.
     */
    public Completed request(int q, int type, long sector, byte[] out, int inLength, Duration timeout)
            throws InterruptedException {
        List<BufferSpec> buffers = new ArrayList<>();
        buffers.add(BufferSpec.readable(header(type, sector), VirtioBlk.HEADER_SIZE));
        if (out != null && out.length > 0) {
            buffers.add(BufferSpec.readable(put(out), out.length));
        }
        long in = inLength > 0 ? alloc(inLength, 16) : 0;
        if (inLength > 0) {
            buffers.add(BufferSpec.writable(in, inLength));
        }
        long status = alloc(1, 1);
        memory.write(status, new byte[] {(byte) 0xEE}, 0, 1);
        buffers.add(BufferSpec.writable(status, 1));
        Object token = new Object();
        submit(q, buffers, false, token);
        UsedBuffer used = awaitUsed(q, timeout);
        if (used.token() != token) {
            throw new AssertionError("completion of another request");
        }
        return new Completed(get(status, 1)[0] & 0xFF, inLength > 0 ? get(in, inLength) : new byte[0],
                used.writtenBytes());
    }

    /** A completed request: its status byte, the device-writable data, the used length. */
    public record Completed(int status, byte[] data, long used) {
    }

    public long config(int offset, int width) {
        return mmio.read(0x100 + offset, width);
    }

    public long deviceFeatures() {
        mmio.write(DEVICE_FEATURES_SEL, 4, 0);
        long low = mmio.read(DEVICE_FEATURES, 4);
        mmio.write(DEVICE_FEATURES_SEL, 4, 1);
        return low | (mmio.read(DEVICE_FEATURES, 4) << 32);
    }

    /**
     * Initialises the device (section 3.1.1): accepts {@code wanted & offered}, sets up {@code queueCount}
     * queues of {@code queueSize}, then DRIVER_OK.
     */
    public MmioBlkGuest init(long wanted, int queueCount, int queueSize) {
        mmio.write(STATUS, 4, 0);
        mmio.write(STATUS, 4, DeviceStatus.ACKNOWLEDGE);
        mmio.write(STATUS, 4, DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER);
        features = deviceFeatures() & wanted;
        mmio.write(DRIVER_FEATURES_SEL, 4, 0);
        mmio.write(DRIVER_FEATURES, 4, (int) features);
        mmio.write(DRIVER_FEATURES_SEL, 4, 1);
        mmio.write(DRIVER_FEATURES, 4, (int) (features >>> 32));
        int status = DeviceStatus.ACKNOWLEDGE | DeviceStatus.DRIVER | DeviceStatus.FEATURES_OK;
        mmio.write(STATUS, 4, status);
        if ((status() & DeviceStatus.FEATURES_OK) == 0) {
            throw new IllegalStateException("device refused features 0x" + Long.toHexString(features));
        }
        queues.clear();
        for (int q = 0; q < queueCount; q++) {
            QueueLayout layout = QueueLayout.contiguous(queueSize, alloc(QueueLayout.contiguousBytes(queueSize), 4096));
            long indirect = alloc((long) queueSize * MAX_INDIRECT * 16, 16);
            queues.add(new SplitDriverQueue(memory, layout, features, indirect, MAX_INDIRECT));
            mmio.write(QUEUE_SEL, 4, q);
            mmio.write(QUEUE_NUM, 4, queueSize);
            write64(QUEUE_DESC_LOW, QUEUE_DESC_HIGH, layout.descTable());
            write64(QUEUE_DRIVER_LOW, QUEUE_DRIVER_HIGH, layout.availRing());
            write64(QUEUE_DEVICE_LOW, QUEUE_DEVICE_HIGH, layout.usedRing());
            mmio.write(QUEUE_READY, 4, 1);
        }
        mmio.write(STATUS, 4, status | DeviceStatus.DRIVER_OK);
        return this;
    }

    /** Writes 0 to the status register: a device reset (section 2.4). */
    public void reset() {
        mmio.write(STATUS, 4, 0);
    }

    private void write64(int low, int high, long value) {
        mmio.write(low, 4, (int) value);
        mmio.write(high, 4, (int) (value >>> 32));
    }

    /** Bump-allocates guest memory, zeroed. */
    public long alloc(long length, int align) {
        long address = (nextFree + align - 1) & -align;
        nextFree = address + length;
        memory.fill(address, length, (byte) 0);
        return address;
    }

    /** A guest buffer holding {@code bytes}. */
    public long put(byte[] bytes) {
        long address = alloc(bytes.length, 16);
        memory.write(address, bytes, 0, bytes.length);
        return address;
    }

    public byte[] get(long address, int length) {
        byte[] bytes = new byte[length];
        memory.read(address, bytes, 0, length);
        return bytes;
    }

    /** A 16-byte request header in guest memory (section 5.2.6). */
    public long header(int type, long sector) {
        return put(ByteBuffer.allocate(VirtioBlk.HEADER_SIZE).order(ByteOrder.LITTLE_ENDIAN).putInt(type).putInt(0)
                .putLong(sector).array());
    }

    /** Adds a chain to queue {@code q} and notifies the device when the ring says so. */
    public void submit(int q, List<BufferSpec> buffers, boolean indirect, Object token) {
        SplitDriverQueue queue = queues.get(q);
        if (!queue.add(buffers, indirect, token)) {
            throw new IllegalStateException("queue " + q + " is full");
        }
        if (queue.kickPrepare()) {
            mmio.write(QUEUE_NOTIFY, 4, q);
        }
    }

    /** Waits (on the interrupt line) for the next used buffer of queue {@code q}. */
    public UsedBuffer awaitUsed(int q, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        SplitDriverQueue queue = queues.get(q);
        while (true) {
            UsedBuffer used = queue.getUsed();
            if (used != null) {
                return used;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("no used buffer on queue " + q + " within " + timeout);
            }
            if (interrupts.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                mmio.write(INTERRUPT_ACK, 4, interruptStatus());
            }
        }
    }

    /** Waits for an interrupt whose InterruptStatus has {@code bit}. */
    public void awaitInterrupt(int bit, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while ((interruptStatus() & bit) == 0) {
            long left = deadline - System.nanoTime();
            if (left <= 0 || !interrupts.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                throw new AssertionError("no interrupt with status bit " + bit + " within " + timeout);
            }
        }
    }

    public SplitDriverQueue queue(int q) {
        return queues.get(q);
    }
}
