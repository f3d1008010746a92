package io.kickplug.guest.virtio;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.MmioRegisters;
import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.guest.lock.LockRegistry;
import io.kickplug.guest.transport.VirtioTransportDriver;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.guest.testing.ForwardingWindow;
import io.kickplug.guest.testing.ForwardingGuestPort;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The guest of the device-side tests (blk-device's request path, notifications, disks of the registry): the one
 * guest driver ({@link VirtioBlkDriver}) probes, negotiates, sets up the split rings and DRIVER_OK, and serves
 * {@link #request} with its request slots; the test also reaches the driver's rings directly ({@link #submit},
 * {@link #queue}), since the device's spec rules are tested with chains a driver never builds (header and data in
 * one buffer, a status inside the data, indirect tables, malformed chains) and with callbacks set by hand. Not a
 * driver of its own: every register access goes through the driver's transport ({@link VirtioTransportDriver}).
 * Single-threaded, like one vCPU.
 */
public final class RawRingGuest {

    private final GuestPort port;
    private final VirtioTransportDriver transport;
    private final Semaphore interrupts = new Semaphore(0);
    private VirtioBlkDriver driver;

    public RawRingGuest(GuestPort port) {
        this.port = port;
        this.transport = VirtioTransportDriver.forPort(port);
    }

    /**
     * Boots the driver (VIRTIO 1.2 section 3.1.1): it accepts {@code wanted & offered} (the split ring only), sets
     * up {@code queueCount} queues (fewer when the device has fewer) of {@code queueSize} (the device's
     * QueueNumMax seen as at most that), then DRIVER_OK.
     */
    public RawRingGuest init(long wanted, int queueCount, int queueSize) {
        // Section 4.2.3.2: the driver uses QueueNumMax as the size; a device offering queueSize at most.
        GuestPort sized = new SizedPort(port, queueSize);
        // Small indirect tables: a request of the tests needs few segments.
        DriverConfig config = new DriverConfig(wanted & ~VirtioFeatures.RING_PACKED, queueCount, 0, 64 * 1024, 0,
                DriverConfig.DEFAULT_TIMEOUT);
        driver = VirtioBlkDriver.boot("test", sized, new VirtqueueFactoryComponent(), config, new GuestInterrupts() {
            @Override
            public void raise(int vector) {
                interrupts.release();
            }
        }, new LockRegistry());
        return this;
    }

    public GuestMemory memory() {
        return port.memory();
    }

    public long features() {
        return driver.features();
    }

    public int status() {
        return transport.status();
    }

    public int interruptStatus() {
        return transport.interruptStatus();
    }

    /** The ConfigGeneration register (sections 2.5 and 4.2.2). */
    public int configGeneration() {
        return transport.configGeneration();
    }

    /** Acknowledges the InterruptStatus bits {@code bits} (section 4.2.2). */
    public void ackInterrupt(int bits) {
        transport.ackInterrupt(bits);
    }

    /** Reads {@code width} (1, 2, 4 or 8) bytes of the configuration space; 8 as two 4-byte reads. */
    public long config(int offset, int width) {
        if (width == 8) {
            return Integer.toUnsignedLong(transport.readConfig(offset, 4))
                    | Integer.toUnsignedLong(transport.readConfig(offset + 4, 4)) << 32;
        }
        return Integer.toUnsignedLong(transport.readConfig(offset, width));
    }

    /** Writes the device configuration space (virtio-mmio: at 0x100, section 4.2.2). */
    public void writeConfig(int offset, int width, long value) {
        port.mmio().write(0x100 + offset, width, value);
    }

    /** The driver's reset step (sections 2.4 and 4.2.2.1): writes 0 to the status and waits until it reads 0. */
    public void reset() {
        new VirtioInit(transport, DriverConfig.DEFAULT_TIMEOUT).reset();
    }

    /** Guest memory from the driver's allocator, zeroed. */
    public long alloc(long length, int align) {
        long address;
        synchronized (driver.ram()) {
            address = driver.ram().allocate(length, align);
        }
        memory().fill(address, length, (byte) 0);
        return address;
    }

    /** A guest buffer holding {@code bytes}. */
    public long put(byte[] bytes) {
        long address = alloc(bytes.length, 16);
        memory().write(address, bytes, 0, bytes.length);
        return address;
    }

    public byte[] get(long address, int length) {
        byte[] bytes = new byte[length];
        memory().read(address, bytes, 0, length);
        return bytes;
    }

    /** A 16-byte request header in guest memory (section 5.2.6). */
    public long header(int type, long sector) {
        return put(ByteBuffer.allocate(VirtioBlk.HEADER_SIZE).order(ByteOrder.LITTLE_ENDIAN).putInt(type).putInt(0)
                .putLong(sector).array());
    }

    /** A completed request: its status byte, the device-writable data, the used length. */
    public record Completed(int status, byte[] data, long used) {
    }

    /**
     * Submits one request on queue {@code q} through a request slot of the driver and waits for it: the header,
     * {@code out} as device-readable data (if any), {@code inLength} device-writable data bytes, and the status
     * byte.
     */
    public Completed request(int q, int type, long sector, byte[] out, int inLength, Duration timeout)
            throws InterruptedException {
        RequestSlot slot = driver.queue(q).takeFree();
        if (slot == null) {
            throw new IllegalStateException("queue " + q + " has no free request slot");
        }
        List<BufferSpec> data = new ArrayList<>();
        if (out != null && out.length > 0) {
            data.add(BufferSpec.readable(put(out), out.length));
        }
        long in = inLength > 0 ? alloc(inLength, 16) : 0;
        if (inLength > 0) {
            data.add(BufferSpec.writable(in, inLength));
        }
        slot.prepare(type, sector, data, false, null);
        if (!driver.submit(slot, 0)) {
            driver.queue(q).release(slot);
            throw new IllegalStateException("queue " + q + " is full");
        }
        UsedBuffer used = awaitUsed(q, timeout);
        if (used.token() != slot) {
            throw new AssertionError("completion of another request");
        }
        Completed c = new Completed(slot.deviceStatus(), inLength > 0 ? get(in, inLength) : new byte[0],
                used.writtenBytes());
        driver.queue(q).release(slot);
        return c;
    }

    /** Adds a chain to queue {@code q}'s ring and notifies the device when the ring says so. */
    public void submit(int q, List<BufferSpec> buffers, boolean indirect, Object token) {
        RequestQueue queue = driver.queue(q);
        boolean kick;
        queue.lock().lock(0);
        try {
            if (!queue.ring.add(buffers, indirect, token)) {
                throw new IllegalStateException("queue " + q + " is full");
            }
            kick = queue.ring.kickPrepare();
        } finally {
            queue.lock().unlock();
        }
        if (kick) {
            driver.notify(q);
        }
    }

    /**
     * Waits (on the interrupt, which the driver's handler step acknowledges) for the next used buffer of queue
     * {@code q}. A request slot's buffer completes the slot, as the driver's collection does.
     */
    public UsedBuffer awaitUsed(int q, Duration timeout) throws InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        RequestQueue queue = driver.queue(q);
        while (true) {
            UsedBuffer used = queue.ring.getUsed();
            if (used != null) {
                if (used.token() instanceof RequestSlot slot && slot.queue == queue && slot.inDevice) {
                    slot.inDevice = false;
                    slot.usedLength = used.writtenBytes();
                    slot.completed();
                }
                return used;
            }
            long left = deadline - System.nanoTime();
            if (left <= 0) {
                throw new AssertionError("no used buffer on queue " + q + " within " + timeout);
            }
            if (interrupts.tryAcquire(left, TimeUnit.NANOSECONDS)) {
                driver.takeInterruptCause(0);
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

    /** The driver's ring of queue {@code q}. */
    public DriverQueue queue(int q) {
        return driver.queue(q).ring;
    }

    /** The port with QueueNumMax read as at most {@code queueSize}: the rest passes through. */
    private static final class SizedPort extends ForwardingGuestPort {
        private final int queueSize;

        SizedPort(GuestPort port, int queueSize) {
            super(port);
            this.queueSize = queueSize;
        }

        @Override
        public RegisterWindow mmio() {
            RegisterWindow w = delegate.mmio();
            return w == null ? null : new ForwardingWindow(w) {
                @Override
                public long read(long offset, int width) {
                    long v = real.read(offset, width);
                    return offset == MmioRegisters.QUEUE_NUM_MAX && v > queueSize ? queueSize : v;
                }
            };
        }
    }
}
