package io.kickplug.guest.virtio;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.MemoryLease;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.lock.LockRegistry;
import io.kickplug.guest.lock.SpinLock;
import io.kickplug.guest.memory.GuestRam;
import io.kickplug.guest.transport.InterruptRouting;
import io.kickplug.guest.transport.VirtioTransportDriver;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * The guest's virtio-blk driver, after Linux's virtio_blk, for both transports ({@link VirtioTransportDriver}:
 * virtio-mmio and virtio-pci): probe and feature negotiation ({@link VirtioInit}, VIRTIO 1.2 section 3.1.1),
 * the configuration reads of section 5.2.4, queue set-up (find_vqs) with {@link RequestQueue}s and their
 * {@link RequestSlot}s in guest RAM, submission and completion per queue, reset, and re-probe of a device that
 * came back after a removal (freeze/restore). Who runs it (threads, interrupts, plugging) is the caller's:
 * the guest engine's vCPUs, or a test.
 *
 * <p>Thread-safety: boot, {@link #reprobe}, {@link #resubmit}, {@link #collectAfterRemoval} and {@link #close}
 * run while nobody else uses the driver; per-queue operations run under the queue's lock (see
 * {@link RequestQueue}); {@link #notify(int)} and the interrupt-cause read are single register accesses.
 */
public final class VirtioBlkDriver implements AutoCloseable {

    private final String name;
    private final DriverConfig config;
    private final GuestMemory memory;
    private final GuestRam ram;
    /** Negotiated features; only VIRTIO_F_RING_PACKED may change, at a re-probe that swaps the ring format. */
    private long features;
    private final boolean indirect;
    private volatile GuestPort port;
    private volatile VirtioTransportDriver transport;
    private volatile VirtioInit init;
    private volatile ConfigReads configReads;
    private volatile InterruptRouting routing;
    private final List<RequestQueue> queues = new ArrayList<>();
    private int pollQueues;
    private volatile long capacitySectors;
    private int blkSize = VirtioBlk.SECTOR_SIZE;
    private int segMax = 1;
    /** Guest RAM for the same-memory check of a returned device. */
    private long probeCell;
    private volatile GuestDriverException broken;
    private boolean closed;

    private VirtioBlkDriver(String name, GuestPort port, DriverConfig config, VirtqueueFactory rings) {
        this.name = name;
        this.port = port;
        this.config = config;
        this.memory = port.memory();
        this.ram = new GuestRam(memory);
        this.transport = VirtioTransportDriver.forPort(port);
        this.init = new VirtioInit(transport, config.timeout());
        this.configReads = new ConfigReads(transport);
        this.features = init.negotiate(DeviceIds.BLOCK, supported(config, rings));
        this.indirect = (features & VirtioFeatures.RING_INDIRECT_DESC) != 0;
    }

    /**
     * Initializes the device behind {@code port} (VIRTIO 1.2 section 3.1.1): negotiates, reads the
     * configuration, sets up the queues with rings from {@code rings}, connects {@code interrupts} and sets
     * DRIVER_OK.
     *
     * @param name names the queues' locks ({@code "<name> vq<q>"}) in {@code locks}
     * @throws GuestDriverException when the device cannot be driven; FAILED is set when the device got that
     *     far, and interrupts are disconnected again
     */
    public static VirtioBlkDriver boot(String name, GuestPort port, VirtqueueFactory rings, DriverConfig config,
            GuestInterrupts interrupts, LockRegistry locks) {
        Objects.requireNonNull(rings, "rings");
        Objects.requireNonNull(interrupts, "interrupts");
        VirtioBlkDriver driver = new VirtioBlkDriver(name, port, config, rings);
        try {
            driver.setUp(rings, interrupts, locks);
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

    /** The features to accept: the configured ones, less the packed ring when {@code rings} cannot make one. */
    private static long supported(DriverConfig config, VirtqueueFactory rings) {
        long f = config.supportedFeatures();
        return rings.supports(RingFormat.PACKED) ? f : f & ~VirtioFeatures.RING_PACKED;
    }

    /** The ring format the negotiated features chose (section 2.8: VIRTIO_F_RING_PACKED). */
    public RingFormat ring() {
        return RingFormat.of(features);
    }

    /** Step 7 of section 3.1.1: device-specific set-up, then DRIVER_OK. */
    private void setUp(VirtqueueFactory rings, GuestInterrupts interrupts, LockRegistry locks) {
        capacitySectors = configReads.read64(VirtioBlk.CFG_CAPACITY);
        if ((features & VirtioBlk.F_BLK_SIZE) != 0) {
            blkSize = configReads.read(VirtioBlk.CFG_BLK_SIZE, 4);
        }
        if ((features & VirtioBlk.F_SEG_MAX) != 0) {
            segMax = configReads.read(VirtioBlk.CFG_SEG_MAX, 4);
            if (segMax == 0) {
                throw new GuestDriverException("device offers VIRTIO_BLK_F_SEG_MAX with seg_max 0; a request needs "
                        + "at least one data segment (VIRTIO 1.2 section 5.2.4)");
            }
        }
        // size_max (section 5.2.4) is read for completeness; Linux clamps it to at least a page, so with one
        // segment per page it never cuts anything.
        if ((features & VirtioBlk.F_SIZE_MAX) != 0) {
            configReads.read(VirtioBlk.CFG_SIZE_MAX, 4);
        }
        int wanted = 1;
        if ((features & VirtioBlk.F_MQ) != 0) {
            // Section 5.2.4: num_queues is valid with VIRTIO_BLK_F_MQ; 0 makes no sense, use one queue then.
            wanted = Math.max(1, configReads.read(VirtioBlk.CFG_NUM_QUEUES, 2) & 0xFFFF);
        }
        wanted = Math.min(wanted, config.maxQueues()); // Linux: min(num_queues, nr_cpu_ids)
        // A request never needs more segments than pages in maxRequestBytes; cap seg_max there so the
        // preallocated indirect tables stay small (Linux caps at 32766).
        segMax = (int) Math.min(Integer.toUnsignedLong(segMax), config.maxRequestBytes() / GuestRam.PAGE + 1);
        List<Integer> sizes = queueSizes(wanted);
        if (!indirect) {
            // Without indirect descriptors a chain of header + segments + status must fit the ring (2.7.5).
            int smallest = sizes.stream().mapToInt(Integer::intValue).min().orElse(4);
            segMax = Math.max(1, Math.min(segMax, smallest - 2));
        }
        probeCell = ram.allocate(8, 8);
        port.connectInterrupts(interrupts);
        List<QueueLayout> layouts = new ArrayList<>();
        for (int q = 0; q < sizes.size(); q++) {
            int size = sizes.get(q);
            QueueLayout layout = ring().layout(size, ram.allocate(ring().bytes(size), 16));
            int maxIndirect = indirect ? segMax + 2 : 0;
            long indirectArea = indirect ? ram.allocate((long) size * maxIndirect * 16, 16) : -1;
            DriverQueue ring = rings.createDriverQueue(memory, layout, features, indirectArea, maxIndirect);
            layouts.add(layout);
            SpinLock lock = new SpinLock(locks.lockClass(name + " vq" + q));
            RequestQueue queue = new RequestQueue(q, memory, layout, ring, indirectArea, maxIndirect, lock);
            int slots = config.slotsPerQueue() == 0 ? size : Math.min(config.slotsPerQueue(), size);
            for (int t = 0; t < slots; t++) {
                queue.addSlot(new RequestSlot(queue, t, ram.allocate(VirtioBlk.HEADER_SIZE, 16), ram.allocate(1, 1)));
            }
            queues.add(queue);
        }
        // Linux: num_poll_vqs = min(poll_queues, num_vqs - 1); the poll queues are the last ones.
        pollQueues = Math.min(config.pollQueues(), queues.size() - 1);
        for (RequestQueue poll : queues.subList(queues.size() - pollQueues, queues.size())) {
            poll.pollQueue = true;
            // No callback, no vector: interrupts off for good (section 2.7.7), before any buffer is added.
            poll.ring.disableCallbacks();
        }
        // find_vqs: rings and interrupts (the MMIO line; on virtio-pci MSI-X vectors, or INTx as a fallback).
        routing = transport.findQueues(layouts);
        init.driverOk();
    }

    /** QueueNumMax of each queue up to {@code wanted}, checked (sections 2.7 and 4.2.3.2). */
    private List<Integer> queueSizes(int wanted) {
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
            if (!QueueLayout.isValidSize(max)) {
                throw new GuestDriverException("queue " + q + " reports QueueNumMax " + Integer.toUnsignedString(max)
                        + "; a split virtqueue size is a power of two up to 32768 (VIRTIO 1.2 section 2.7)");
            }
            if (transport.queueReady(q)) {
                throw new GuestDriverException("queue " + q + " is already ready before the driver set it up "
                        + "(VIRTIO 1.2 section 4.2.3.2)");
            }
            sizes.add(max);
        }
        return sizes;
    }

    // What the device is ------------------------------------------------------------------------------

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

    public long capacityBytes() {
        long sectors = capacitySectors;
        return sectors > Long.MAX_VALUE / VirtioBlk.SECTOR_SIZE ? Long.MAX_VALUE : sectors * VirtioBlk.SECTOR_SIZE;
    }

    public int blkSize() {
        return blkSize;
    }

    /** Data segments per request after the caps (seg_max, ring size, maxRequestBytes). */
    public int segMax() {
        return segMax;
    }

    public DriverConfig config() {
        return config;
    }

    public GuestMemory memory() {
        return memory;
    }

    /** Guest RAM the driver allocates from; callers allocate their data buffers here too (synchronized on it). */
    public GuestRam ram() {
        return ram;
    }

    public int queueCount() {
        return queues.size();
    }

    public RequestQueue queue(int q) {
        return queues.get(q);
    }

    /** The poll queues in use (the last ones). */
    public int pollQueues() {
        return pollQueues;
    }

    /** How the device's interrupts arrive, as find_vqs (or the last re-probe) chose. */
    public InterruptRouting routing() {
        return routing;
    }

    /** Requests in the device over all queues (a snapshot). */
    public int inDevice() {
        return queues.stream().mapToInt(RequestQueue::inDevice).sum();
    }

    // The running device ------------------------------------------------------------------------------

    /** The device status register (section 2.1). */
    public int deviceStatus() {
        return transport.status();
    }

    /** Whether the device set DEVICE_NEEDS_RESET (section 2.1.2). */
    public boolean needsReset() {
        return (transport.status() & DeviceStatus.DEVICE_NEEDS_RESET) != 0;
    }

    /** The available-buffer notification of queue {@code q} (section 2.9): one register write, a VM exit. */
    public void notify(int q) {
        transport.notify(q);
    }

    /** The first step of the interrupt handler (see {@link VirtioTransportDriver#takeInterruptCause}). */
    public int takeInterruptCause(int raised) {
        return transport.takeInterruptCause(raised);
    }

    /** After a configuration-change interrupt: reads the capacity again (section 5.2.4). */
    public void readCapacity() {
        capacitySectors = configReads.read64(VirtioBlk.CFG_CAPACITY);
    }

    /**
     * Adds a prepared slot to its queue and notifies the device when the ring asks for it (lock, add,
     * kick_prepare, unlock, notify: the outside-lock kick). For callers without a kick policy of their own.
     *
     * @return false when the ring has no room for the chain
     */
    public boolean submit(RequestSlot slot, int cpu) {
        checkUsable();
        RequestQueue q = slot.queue;
        boolean kick;
        q.lock().lock(cpu);
        try {
            if (!q.add(slot)) {
                return false;
            }
            kick = q.kickPrepare();
        } finally {
            q.lock().unlock();
        }
        if (kick) {
            transport.notify(q.index);
        }
        return true;
    }

    /** Gives up on the device (e.g. DEVICE_NEEDS_RESET): fails the requests in it; nothing is taken any more. */
    public void fail(String reason) {
        broken = new GuestDriverException(reason);
        failInDevice(reason);
    }

    /** @throws GuestDriverException when the driver failed or is closed */
    public void checkUsable() {
        if (closed) {
            throw new GuestDriverException("driver of " + name + " is closed");
        }
        GuestDriverException b = broken;
        if (b != null) {
            throw b;
        }
    }

    private void failInDevice(String reason) {
        for (RequestQueue q : queues) {
            for (RequestSlot s : q.all) {
                if (s.inDevice) {
                    s.fail(reason);
                }
            }
        }
    }

    /**
     * Resets the device (status 0, read back until 0), disconnects interrupts and takes back every chain the
     * device did not use; their slots fail with "device was reset with the request in flight". Idempotent.
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
            for (RequestQueue q : queues) {
                q.ring.detachUnused();
            }
            failInDevice("device was reset with the request in flight");
        }
    }

    // Device removal and return (Linux's virtio_blk freeze/restore) ------------------------------------

    /**
     * Takes what a removed device completed from the used rings (its reset waited for everything it had in
     * flight, so they are final) and hands each slot to {@code done}.
     */
    public int collectAfterRemoval(Consumer<RequestSlot> done) {
        List<RequestSlot> collected = new ArrayList<>();
        for (RequestQueue q : queues) {
            q.collect(collected);
        }
        collected.forEach(done);
        return collected.size();
    }

    /**
     * Initializes the returned device behind {@code next} with new rings from {@code rings} at the old guest
     * addresses (sections 3.1.1 and 2.7), after checking that it sees the same guest memory and offers the
     * same features.
     *
     * @throws NotTheSameDevice when the device cannot be resumed on
     * @throws GuestDriverException when the device went again or refused the queues
     */
    public void reprobe(GuestPort next, VirtqueueFactory rings, GuestInterrupts interrupts) {
        if (rings == null) {
            throw new GuestDriverException("no virtqueue factory");
        }
        // The guest keeps its memory: the returned device must see it (same shared pages).
        long cookie = System.nanoTime() ^ 0x5DEECE66DL;
        memory.writeU64(probeCell, cookie);
        // The returned device's memory is a mapping of its own, which its registry unmaps as soon as the disk goes
        // again: it is read only under a lease (a read racing the unmap would crash the process with SIGSEGV; a
        // released mapping refuses the lease with ReleasedMemoryException, and the recovery waits for the next
        // device).
        boolean same;
        try (MemoryLease lease = next.memory().lease()) {
            same = next.memory().readU64(probeCell) == cookie;
        }
        if (!same) {
            throw new NotTheSameDevice("the device of " + name + " came back with other guest memory;"
                    + " the guest's buffers are not there, so it cannot resume");
        }
        VirtioTransportDriver t = VirtioTransportDriver.forPort(next);
        VirtioInit i = new VirtioInit(t, config.timeout());
        long f = i.negotiate(DeviceIds.BLOCK, supported(config, rings));
        // The ring format may change (kp:ring: the device now offers the other one); nothing else may.
        if ((f & ~VirtioFeatures.RING_PACKED) != (features & ~VirtioFeatures.RING_PACKED)) {
            i.fail();
            throw new NotTheSameDevice("the device of " + name + " came back with features 0x"
                    + Long.toHexString(f) + " instead of 0x" + Long.toHexString(features));
        }
        for (RequestQueue q : queues) {
            int max = t.queueMaxSize(q.index);
            if (max < q.layout.size()) {
                i.fail();
                throw new GuestDriverException("queue " + q.index + " came back with QueueNumMax " + max
                        + ", smaller than its ring of " + q.layout.size());
            }
        }
        port = next;
        transport = t;
        init = i;
        configReads = new ConfigReads(t);
        readCapacity();
        next.connectInterrupts(interrupts);
        if (RingFormat.of(f) != ring()) {
            // New rings of the other format, in new guest memory (the old ring memory is not used again).
            features = f;
            for (RequestQueue q : queues) {
                int size = q.layout.size();
                q.layout = ring().layout(size, ram.allocate(ring().bytes(size), 16));
            }
        }
        List<QueueLayout> layouts = new ArrayList<>();
        for (RequestQueue q : queues) {
            q.ring = rings.createDriverQueue(memory, q.layout, features, q.indirectArea, q.maxIndirect);
            layouts.add(q.layout);
            if (q.pollQueue || q.hipriInFlight > 0) {
                q.ring.disableCallbacks();
            }
        }
        routing = t.findQueues(layouts);
        i.driverOk();
    }

    /** Submits again every request that was in the device and not completed; kicks each queue. */
    public int resubmit() {
        int n = 0;
        for (RequestQueue q : queues) {
            int added = 0;
            for (RequestSlot s : q.all) {
                if (!s.inDevice) {
                    continue;
                }
                if (!q.ring.add(s.chain, indirect && s.chain.size() > 1, s)) {
                    throw new GuestDriverException("queue " + q.index + " has no room to resubmit the requests it had"
                            + " in flight");
                }
                added++;
            }
            if (added > 0 && q.kickPrepare()) {
                transport.notify(q.index);
            }
            n += added;
        }
        return n;
    }

    /** Configuration space reads that ConfigGeneration keeps consistent (sections 2.5 and 4.2.2.2). */
    private static final class ConfigReads {
        private static final int ATTEMPTS = 1000;
        private final VirtioTransportDriver transport;

        ConfigReads(VirtioTransportDriver transport) {
            this.transport = transport;
        }

        /** A 64-bit field as two 32-bit reads, repeated until ConfigGeneration is stable. */
        long read64(int offset) {
            for (int i = 0; i < ATTEMPTS; i++) {
                int before = transport.configGeneration();
                long low = transport.readConfig(offset, 4) & 0xFFFF_FFFFL;
                long high = transport.readConfig(offset + 4, 4) & 0xFFFF_FFFFL;
                if (transport.configGeneration() == before) {
                    return high << 32 | low;
                }
            }
            throw unstable();
        }

        int read(int offset, int width) {
            for (int i = 0; i < ATTEMPTS; i++) {
                int before = transport.configGeneration();
                int value = transport.readConfig(offset, width);
                if (transport.configGeneration() == before) {
                    return value;
                }
            }
            throw unstable();
        }

        private static GuestDriverException unstable() {
            return new GuestDriverException("ConfigGeneration changed on each of " + ATTEMPTS
                    + " attempts to read the configuration space (VIRTIO 1.2 section 2.5)");
        }
    }
}
