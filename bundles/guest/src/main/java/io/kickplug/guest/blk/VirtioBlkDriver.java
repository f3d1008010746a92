package io.kickplug.guest.blk;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.driver.InterruptLine;
import io.kickplug.guest.driver.VirtioInit;
import io.kickplug.guest.memory.GuestRam;
import io.kickplug.guest.transport.InterruptRouting;
import io.kickplug.guest.transport.VirtioTransportDriver;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;

/**
 * The simulated guest's virtio-blk driver, shaped after Linux's virtio_blk: one lock per virtqueue around
 * every {@link DriverQueue} operation, {@code kickPrepare} under the lock and the notify (a QueueNotify
 * register write, the VM exit) after it is released. Requests are 3-descriptor chains (header, data,
 * status; section 5.2.6) built in preallocated per-queue slots.
 *
 * <p>Completions: the device raises an interrupt on its I/O thread; {@link InterruptLine} wakes the vCPU
 * thread waiting in {@link #awaitCompletions}, which reads and acknowledges InterruptStatus and drains the
 * used rings. Every wait is bounded by {@link BlkDriverConfig#timeout()}.
 *
 * <p>Submission is thread-safe; {@link #awaitCompletions} is called by one vCPU thread at a time.
 */
public final class VirtioBlkDriver implements AutoCloseable {
    private static final int MAX_QUEUE_SIZE = 32768;
    private static final byte STATUS_UNWRITTEN = (byte) 0xFF;
    private static final int CONFIG_READ_ATTEMPTS = 1000;

    private final GuestPort port;
    private final VirtioTransportDriver transport;
    private final VirtioInit init;
    private final InterruptLine line;
    private final BlkDriverConfig config;
    private final GuestMemory memory;
    private final long features;
    private final List<Vq> queues = new ArrayList<>();
    private final AtomicLong notifies = new AtomicLong();
    private final AtomicLong configChanges = new AtomicLong();
    private volatile long capacitySectors;
    private int blkSize = VirtioBlk.SECTOR_SIZE;
    private int segMax;
    private volatile GuestDriverException broken;
    private boolean closed;
    private InterruptRouting routing;

    private VirtioBlkDriver(GuestPort port, VirtioTransportDriver transport, BlkDriverConfig config) {
        this.port = port;
        this.transport = transport;
        this.config = config;
        this.memory = port.memory();
        this.init = new VirtioInit(transport, config.timeout());
        this.line = new InterruptLine();
        this.features = init.negotiate(DeviceIds.BLOCK, config.supportedFeatures());
    }

    /**
     * Initializes the device behind {@code port} (VIRTIO 1.2 section 3.1.1) and returns a live driver.
     *
     * @throws GuestDriverException when the device cannot be driven; FAILED is set when the device got
     *     that far, and interrupts are disconnected again
     */
    public static VirtioBlkDriver boot(GuestPort port, VirtqueueFactory factory, BlkDriverConfig config) {
        VirtioBlkDriver driver = new VirtioBlkDriver(port, VirtioTransportDriver.forPort(port), config);
        try {
            driver.setUp(factory);
            return driver;
        } catch (RuntimeException e) {
            driver.init.fail();
            port.connectInterrupts(null);
            if (e instanceof GuestDriverException) {
                throw e;
            }
            throw new GuestDriverException("virtio-blk initialization failed: " + e.getMessage(), e);
        }
    }

    private void setUp(VirtqueueFactory factory) {
        // Step 7 of section 3.1.1: device-specific setup, then DRIVER_OK.
        capacitySectors = readConfig64(VirtioBlk.CFG_CAPACITY);
        if ((features & VirtioBlk.F_BLK_SIZE) != 0) {
            blkSize = readConfigStable(VirtioBlk.CFG_BLK_SIZE, 4);
        }
        if ((features & VirtioBlk.F_SEG_MAX) != 0) {
            segMax = readConfigStable(VirtioBlk.CFG_SEG_MAX, 4);
            if (segMax == 0) {
                throw new GuestDriverException("device offers VIRTIO_BLK_F_SEG_MAX with seg_max 0; a request needs "
                        + "at least one data segment (VIRTIO 1.2 section 5.2.4)");
            }
        }
        int wanted = 1;
        if ((features & VirtioBlk.F_MQ) != 0) {
            // Section 5.2.4: num_queues is valid with VIRTIO_BLK_F_MQ; 0 makes no sense, use one queue then.
            wanted = Math.max(1, readConfigStable(VirtioBlk.CFG_NUM_QUEUES, 2));
        }
        wanted = Math.min(wanted, config.maxQueues());

        port.connectInterrupts(line);
        GuestRam ram = new GuestRam(memory);
        boolean indirect = (features & VirtioFeatures.RING_INDIRECT_DESC) != 0;
        List<Integer> sizes = new ArrayList<>();
        for (int q = 0; q < wanted; q++) {
            int max = transport.queueMaxSize(q);
            if (max == 0) {
                if (q == 0) {
                    throw new GuestDriverException("device has no request queue: QueueNumMax of queue 0 is 0 "
                            + "(VIRTIO 1.2 section 4.2.3.2)");
                }
                break;
            }
            if (max < 0 || max > MAX_QUEUE_SIZE || Integer.bitCount(max) != 1) {
                throw new GuestDriverException("queue " + q + " reports QueueNumMax " + Integer.toUnsignedString(max)
                        + "; a split virtqueue size is a power of two up to 32768 (VIRTIO 1.2 section 2.7)");
            }
            if (transport.queueReady(q)) {
                throw new GuestDriverException("queue " + q + " is already ready before the driver set it up "
                        + "(VIRTIO 1.2 section 4.2.3.2)");
            }
            sizes.add(max);
        }
        int count = sizes.size();
        int slotsPerQueue = (config.totalSlots() + count - 1) / count;
        List<QueueLayout> layouts = new ArrayList<>();
        for (int q = 0; q < count; q++) {
            int size = sizes.get(q);
            long base = ram.allocate(QueueLayout.contiguousBytes(size), 16);
            QueueLayout layout = QueueLayout.contiguous(size, base);
            layouts.add(layout);
            long indirectArea = indirect ? ram.allocate((long) size * 3 * 16, 16) : -1;
            DriverQueue dq = factory.createDriverQueue(memory, layout, features, indirectArea, indirect ? 3 : 0);
            int slots = Math.min(slotsPerQueue, size);
            Vq vq = new Vq(q, dq, slots);
            for (int s = 0; s < slots; s++) {
                long header = ram.allocate(VirtioBlk.HEADER_SIZE, 16);
                long data = ram.allocate(config.maxDataBytes(), 64);
                long status = ram.allocate(1, 1);
                Slot slot = new Slot(q, header, data, status);
                vq.free.add(slot);
                vq.all.add(slot);
            }
            queues.add(vq);
        }
        // find_vqs: the queues' rings and interrupts (one line, or MSI-X vectors on virtio-pci).
        routing = transport.findQueues(layouts);
        line.route(routing);
        init.driverOk();
    }

    /** Features negotiated with the device. */
    public long features() {
        return features;
    }

    public boolean readOnly() {
        return (features & VirtioBlk.F_RO) != 0;
    }

    public boolean hasFlush() {
        return (features & VirtioBlk.F_FLUSH) != 0;
    }

    /** Capacity in 512-byte sectors, as last read from the configuration space. */
    public long capacitySectors() {
        return capacitySectors;
    }

    public int blkSize() {
        return blkSize;
    }

    public int queueCount() {
        return queues.size();
    }

    public int queueSize(int queue) {
        return queues.get(queue).dq.size();
    }

    /** Request slots of {@code queue}: how many requests it can have in flight. */
    public int slots(int queue) {
        return queues.get(queue).slotCount;
    }

    /** How the device's interrupts arrive (one line, or MSI-X vectors). */
    public InterruptRouting routing() {
        return routing;
    }

    /** Interrupts the device raised since boot. */
    public long interrupts() {
        return line.raisedCount();
    }

    /** QueueNotify writes since boot. */
    public long notifies() {
        return notifies.get();
    }

    public long configChanges() {
        return configChanges.get();
    }

    /** Requests submitted and not yet completed, over all queues. */
    public int inFlight() {
        int n = 0;
        for (Vq vq : queues) {
            vq.lock.lock();
            try {
                n += vq.inFlight;
            } finally {
                vq.lock.unlock();
            }
        }
        return n;
    }

    /**
     * Submits {@code request} on {@code queue}: fills a free slot, adds the chain and publishes it under the
     * queue lock, then notifies the device (outside the lock) when {@code kickPrepare} says so.
     *
     * @return false when the queue has no free slot or descriptors (wait for completions, then retry)
     * @throws GuestDriverException when the driver is broken or closed
     */
    public boolean trySubmit(int queue, BlkRequest request) {
        checkUsable();
        if (request.length() > config.maxDataBytes()) {
            throw new IllegalArgumentException("request of " + request.length() + " bytes exceeds the "
                    + config.maxDataBytes() + "-byte slot buffers");
        }
        if (request.type() == VirtioBlk.T_OUT && readOnly()) {
            throw new IllegalStateException("device is read-only (VIRTIO_BLK_F_RO, VIRTIO 1.2 section 5.2.6.1)");
        }
        Vq vq = queues.get(queue);
        Slot slot;
        vq.lock.lock();
        try {
            slot = vq.free.poll();
        } finally {
            vq.lock.unlock();
        }
        if (slot == null) {
            return false;
        }
        // The slot is ours until it is added: fill it without the lock.
        memory.writeU32(slot.header, request.type());
        memory.writeU32(slot.header + 4, 0);
        memory.writeU64(slot.header + 8, request.sector());
        if (request.type() == VirtioBlk.T_OUT) {
            memory.write(slot.data, request.buffer(), 0, request.length());
        }
        memory.writeU8(slot.status, STATUS_UNWRITTEN);
        List<BufferSpec> chain = new ArrayList<>(3);
        chain.add(BufferSpec.readable(slot.header, VirtioBlk.HEADER_SIZE));
        if (request.length() > 0) {
            chain.add(request.type() == VirtioBlk.T_IN ? BufferSpec.writable(slot.data, request.length())
                    : BufferSpec.readable(slot.data, request.length()));
        }
        chain.add(BufferSpec.writable(slot.status, 1));
        boolean indirect = (features & VirtioFeatures.RING_INDIRECT_DESC) != 0;

        boolean kick;
        vq.lock.lock();
        try {
            if (!vq.dq.add(chain, indirect, slot)) {
                vq.free.push(slot);
                return false;
            }
            slot.request = request;
            slot.inDevice = true;
            vq.inFlight++;
            kick = vq.dq.kickPrepare();
        } finally {
            vq.lock.unlock();
        }
        if (kick) {
            transport.notify(queue);
            notifies.incrementAndGet();
        }
        return true;
    }

    /**
     * Waits for at least one completion, hands every completed request to {@code sink} (on this thread,
     * with no lock held) and returns how many there were.
     *
     * @throws GuestDriverException when nothing completes within the timeout, the device needs a reset, or
     *     the device returned a buffer the driver never made available
     * @throws IllegalStateException when no request is in flight
     */
    public int awaitCompletions(Consumer<BlkRequest> sink) {
        long deadline = System.nanoTime() + config.timeout().toNanos();
        boolean interrupted = line.take();
        while (true) {
            checkUsable();
            if (interrupted) {
                handleInterrupt();
            }
            int done = drain(sink);
            if (done > 0) {
                return done;
            }
            if (inFlight() == 0) {
                throw new IllegalStateException("no request in flight to wait for");
            }
            interrupted = line.await(deadline);
            if (!interrupted) {
                int status = transport.status();
                if ((status & DeviceStatus.DEVICE_NEEDS_RESET) != 0) {
                    failAll("device set DEVICE_NEEDS_RESET without a configuration-change interrupt (status 0x"
                            + Integer.toHexString(status) + ", VIRTIO 1.2 section 2.1.2)");
                    throw broken;
                }
                throw new GuestDriverException("no completion within " + describe(config.timeout().toMillis())
                        + " (" + inFlight() + " requests in flight, device status 0x" + Integer.toHexString(status)
                        + ")");
            }
        }
    }

    private static String describe(long millis) {
        return millis % 1000 == 0 ? millis / 1000 + " s" : millis + " ms";
    }

    private void handleInterrupt() {
        // vm_interrupt / vp_interrupt read (and acknowledge) the status; with MSI-X the vectors said it.
        int isr = transport.takeInterruptCause(line.takeCauses());
        if ((isr & InterruptRouting.CONFIG_CHANGE) != 0) {
            configChanges.incrementAndGet();
            int status = transport.status();
            if ((status & DeviceStatus.DEVICE_NEEDS_RESET) != 0) {
                // Section 2.1.2: the device signals an error it cannot recover from without a reset.
                failAll("device needs a reset (DEVICE_NEEDS_RESET set, status 0x" + Integer.toHexString(status)
                        + ", VIRTIO 1.2 section 2.1.2)");
                throw broken;
            }
            capacitySectors = readConfig64(VirtioBlk.CFG_CAPACITY);
        }
    }

    private int drain(Consumer<BlkRequest> sink) {
        int total = 0;
        for (Vq vq : queues) {
            List<Slot> done = new ArrayList<>();
            vq.lock.lock();
            try {
                if (vq.inFlight == 0) {
                    continue;
                }
                do {
                    vq.dq.disableCallbacks();
                    UsedBuffer used;
                    while ((used = vq.dq.getUsed()) != null) {
                        Slot slot = vq.claim(used.token());
                        slot.usedLength = used.writtenBytes();
                        done.add(slot);
                    }
                } while (!vq.dq.enableCallbacks());
            } catch (RuntimeException e) {
                GuestDriverException fault = e instanceof GuestDriverException g ? g
                        : new GuestDriverException("used ring of queue " + vq.index + " is corrupt: " + e.getMessage(),
                                e);
                broken = fault;
                throw fault;
            } finally {
                vq.lock.unlock();
            }
            List<BlkRequest> completed = new ArrayList<>(done.size());
            for (Slot slot : done) {
                BlkRequest request = slot.request;
                int status = memory.readU8(slot.status) & 0xFF;
                if (status == VirtioBlk.S_OK && request.type() == VirtioBlk.T_IN) {
                    memory.read(slot.data, request.buffer(), 0, request.length());
                }
                request.complete(status, slot.usedLength);
                slot.request = null;
                completed.add(request);
            }
            vq.lock.lock();
            try {
                for (Slot slot : done) {
                    vq.free.push(slot);
                }
            } finally {
                vq.lock.unlock();
            }
            completed.forEach(sink);
            total += completed.size();
        }
        return total;
    }

    private void failAll(String reason) {
        broken = new GuestDriverException(reason);
        for (Vq vq : queues) {
            vq.lock.lock();
            try {
                for (Slot slot : vq.all) {
                    if (slot.request != null) {
                        slot.request.fail(reason);
                    }
                }
            } finally {
                vq.lock.unlock();
            }
        }
    }

    private void checkUsable() {
        if (closed) {
            throw new GuestDriverException("driver is closed");
        }
        GuestDriverException b = broken;
        if (b != null) {
            throw b;
        }
    }

    /**
     * Resets the device (status 0, read back until 0), disconnects interrupts, and takes back every chain
     * the device did not use; their requests fail with "device was reset". Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        try {
            init.reset();
        } finally {
            port.connectInterrupts(null);
            for (Vq vq : queues) {
                vq.lock.lock();
                try {
                    vq.dq.detachUnused();
                    for (Slot slot : vq.all) {
                        slot.inDevice = false;
                        if (slot.request != null) {
                            if (slot.request.status() == BlkRequest.PENDING) {
                                slot.request.fail("device was reset with the request in flight");
                            }
                            slot.request = null;
                        }
                    }
                    vq.inFlight = 0;
                } finally {
                    vq.lock.unlock();
                }
            }
        }
    }

    /** A 64-bit config field as two 32-bit reads, repeated until ConfigGeneration is stable (2.5, 4.2.2.2). */
    private long readConfig64(int offset) {
        for (int i = 0; i < CONFIG_READ_ATTEMPTS; i++) {
            int before = transport.configGeneration();
            long low = transport.readConfig(offset, 4) & 0xFFFF_FFFFL;
            long high = transport.readConfig(offset + 4, 4) & 0xFFFF_FFFFL;
            if (transport.configGeneration() == before) {
                return high << 32 | low;
            }
        }
        throw unstableConfig();
    }

    private int readConfigStable(int offset, int width) {
        for (int i = 0; i < CONFIG_READ_ATTEMPTS; i++) {
            int before = transport.configGeneration();
            int value = transport.readConfig(offset, width);
            if (transport.configGeneration() == before) {
                return value;
            }
        }
        throw unstableConfig();
    }

    private static GuestDriverException unstableConfig() {
        return new GuestDriverException("ConfigGeneration changed on each of " + CONFIG_READ_ATTEMPTS
                + " attempts to read the configuration space (VIRTIO 1.2 section 2.5)");
    }

    /** One preallocated request: header, data buffer and status byte in guest memory. */
    private static final class Slot {
        final int queue;
        final long header;
        final long data;
        final long status;
        BlkRequest request;
        boolean inDevice;
        int usedLength;

        Slot(int queue, long header, long data, long status) {
            this.queue = queue;
            this.header = header;
            this.data = data;
            this.status = status;
        }
    }

    /** One virtqueue with its lock (Linux's vq_lock) and its slots. */
    private static final class Vq {
        final int index;
        final DriverQueue dq;
        final ReentrantLock lock = new ReentrantLock();
        final ArrayDeque<Slot> free = new ArrayDeque<>();
        final List<Slot> all = new ArrayList<>();
        final int slotCount;
        int inFlight;

        Vq(int index, DriverQueue dq, int slotCount) {
            this.index = index;
            this.dq = dq;
            this.slotCount = slotCount;
        }

        /** Maps a used token back to its slot; the device may not invent or repeat buffers (2.7.8). */
        Slot claim(Object token) {
            if (!(token instanceof Slot slot) || slot.queue != index || !slot.inDevice) {
                throw new GuestDriverException("device returned a buffer on queue " + index
                        + " that the driver did not make available (VIRTIO 1.2 section 2.7.8)");
            }
            slot.inDevice = false;
            inFlight--;
            return slot;
        }
    }
}
