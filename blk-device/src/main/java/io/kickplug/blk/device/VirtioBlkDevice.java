package io.kickplug.blk.device;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.request.BlkLimits;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The virtio-blk device (VIRTIO 1.2 section 5.2). Queue {@code q} is served by I/O thread
 * {@code q % ioThreads.size()}; a notification only signals that thread's source for the queue.
 */
public final class VirtioBlkDevice implements VirtioDevice {

    private static final Logger LOG = System.getLogger(VirtioBlkDevice.class.getName());
    /** How long {@link #reset()} waits for an I/O thread before it gives up and logs. */
    private static final long RESET_TIMEOUT_SECONDS = 30;

    private final String name;
    private final BlockBackend backend;
    private final boolean readOnly;
    private final int numQueues;
    private final int queueSize;
    private final List<IoThread> ioThreads;
    private final BlkStats stats = new BlkStats();
    private final BlkMode mode;
    private final RequestProcessor processor;
    /** The transport's signals from the last activation, kept across resets for configuration changes. */
    private volatile DeviceSignals signals;
    private final Object lifecycle = new Object();
    private volatile Active active;

    /**
     * @param name the disk name, for thread, source and log names
     * @param readOnly refuse writes and offer VIRTIO_BLK_F_RO (also forced when the backend is read-only)
     * @param numQueues 1 to 65535 virtqueues
     * @param queueSize the largest queue size, a power of two from 2 to 32768
     * @param serial the GET_ID answer, at most 20 bytes
     * @param ioThreads the threads that serve the queues, at least one
     */
    public VirtioBlkDevice(String name, BlockBackend backend, boolean readOnly, int numQueues, int queueSize,
            byte[] serial, List<IoThread> ioThreads) {
        if (numQueues < 1 || numQueues > 0xFFFF) {
            throw new IllegalArgumentException("numQueues " + numQueues + " is out of range 1..65535");
        }
        if (queueSize < 2 || queueSize > 32768 || Integer.bitCount(queueSize) != 1) {
            throw new IllegalArgumentException("queue size " + queueSize + " is not a power of two in 2..32768");
        }
        if (ioThreads.isEmpty()) {
            throw new IllegalArgumentException("a device needs at least one I/O thread");
        }
        this.name = name;
        this.backend = backend;
        this.readOnly = readOnly || backend.readOnly();
        this.numQueues = numQueues;
        this.queueSize = queueSize;
        this.ioThreads = List.copyOf(ioThreads);
        // write_zeroes_may_unmap: the unmap flag may deallocate where the backend can discard (5.2.4).
        this.mode = new BlkMode(BlkLimits.DEFAULTS.withWriteZeroesMayUnmap(backend.supportsDiscard()));
        this.processor = new RequestProcessor(name, backend, this.readOnly, serial, stats, mode);
    }

    @Override
    public int deviceId() {
        return DeviceIds.BLOCK;
    }

    /**
     * Section 5.2.3. Always: SIZE_MAX, SEG_MAX, BLK_SIZE, TOPOLOGY, FLUSH, CONFIG_WCE (5.2.5.2: FLUSH MUST
     * be offered with it) and LIFETIME. MQ with several queues, RO on a read-only disk. DISCARD when the
     * backend can discard, WRITE_ZEROES and SECURE_ERASE (done as writing zeroes) when it can write zeroes;
     * none of these three on a read-only disk.
     */
    @Override
    public long offeredFeatures() {
        long features = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC | VirtioFeatures.RING_EVENT_IDX
                | VirtioBlk.F_SIZE_MAX | VirtioBlk.F_SEG_MAX | VirtioBlk.F_BLK_SIZE | VirtioBlk.F_TOPOLOGY
                | VirtioBlk.F_FLUSH | VirtioBlk.F_CONFIG_WCE | VirtioBlk.F_LIFETIME;
        if (numQueues > 1) {
            features |= VirtioBlk.F_MQ;
        }
        if (readOnly) {
            features |= VirtioBlk.F_RO;
        } else {
            if (backend.supportsDiscard()) {
                features |= VirtioBlk.F_DISCARD;
            }
            if (backend.supportsWriteZeroes()) {
                features |= VirtioBlk.F_WRITE_ZEROES | VirtioBlk.F_SECURE_ERASE;
            }
        }
        return features;
    }

    /** A new negotiation (FEATURES_OK): the request types and the write cache follow it. */
    @Override
    public boolean acceptsFeatures(long driverFeatures) {
        mode.negotiate(driverFeatures);
        return true;
    }

    @Override
    public int queueCount() {
        return numQueues;
    }

    @Override
    public int maxQueueSize() {
        return queueSize;
    }

    @Override
    public int configSize() {
        return VirtioBlk.CONFIG_SIZE;
    }

    /**
     * Section 5.2.4: capacity in 512-byte sectors (read live from the backend, so a resize shows at once),
     * then the fields of the offered features ({@link BlkConfigSpace}); {@code seg_max} is the queue size
     * minus the header and status descriptors.
     */
    @Override
    public long readConfig(int offset, int width) {
        byte[] config = BlkConfigSpace.layout(processor.capacitySectors(), offeredFeatures(), mode.writeCache(),
                queueSize - 2, numQueues, BlkGeometry.DEFAULTS, mode.limits());
        return BlkConfigSpace.read(config, offset, width);
    }

    /**
     * The only driver-writable field is {@code writeback}, a byte, and only with VIRTIO_BLK_F_CONFIG_WCE
     * negotiated (5.2.4); any nonzero value selects writeback, as in QEMU. Every other write is ignored.
     */
    @Override
    public void writeConfig(int offset, int width, long value) {
        if (offset == VirtioBlk.CFG_WRITEBACK && width == 1 && mode.setWriteback(value != 0)) {
            LOG.log(Level.DEBUG, () -> "disk " + name + ": write cache " + (value != 0 ? "writeback" : "writethrough"));
            return;
        }
        LOG.log(Level.DEBUG, () -> "disk " + name + ": ignored config write of " + width + " bytes at " + offset);
    }

    /**
     * The backend's size changed: sends a configuration-change notification (5.2.6.2 SHOULD; the
     * transport advances the configuration generation, 2.5). Before the first activation there is nobody to
     * tell; a driver reads the capacity when it initialises.
     */
    public void capacityChanged() {
        DeviceSignals current = signals;
        if (current != null) {
            current.configChanged();
        }
    }

    /** Whether the driver's write cache is on (CONFIG_WCE writeback, or FLUSH negotiated). */
    public boolean writeCache() {
        return mode.writeCache();
    }

    @Override
    public void activate(DeviceActivation activation) {
        synchronized (lifecycle) {
            if (active != null) {
                // The transport resets before it activates again; waiting for I/O threads here could
                // deadlock with a transport that holds its lock while activating.
                throw new IllegalStateException("disk " + name + ": activated twice without a reset");
            }
            mode.confirm(activation.negotiatedFeatures());
            signals = activation.signals();
            Active next = new Active(activation);
            active = next;
            next.kickAll();
        }
    }

    @Override
    public void reset() {
        synchronized (lifecycle) {
            stopActive();
            mode.reset();
        }
    }

    @Override
    public void queueNotify(int queueIndex) {
        Active current = active;
        if (current != null) {
            current.signal(queueIndex);
        }
        // Before DRIVER_OK or after a reset a notification is spurious: 2.7.10.2 says to tolerate it.
    }

    /** Whether writes are refused (VIRTIO_BLK_F_RO is offered). */
    public boolean readOnly() {
        return readOnly;
    }

    /** The disk's request counters. */
    public BlkStats stats() {
        return stats;
    }

    /** True when queue {@code queueIndex} stopped after a fault and waits for a reset. */
    public boolean queueStopped(int queueIndex) {
        Active current = active;
        return current != null && current.workerStopped(queueIndex);
    }

    private void stopActive() {
        Active current = active;
        if (current == null) {
            return;
        }
        current.stop();
        active = null;
    }

    /** One activation: a worker and a source per enabled queue. */
    private final class Active {
        private final IoSource[] sources;
        private final QueueWorker[] workers;
        private final Set<IoThread> threads = Collections.newSetFromMap(new IdentityHashMap<>());
        private volatile boolean stopping;

        Active(DeviceActivation activation) {
            List<DeviceQueue> queues = activation.queues();
            int count = Math.min(queues.size(), numQueues);
            sources = new IoSource[count];
            workers = new QueueWorker[count];
            for (int q = 0; q < count; q++) {
                DeviceQueue queue = queues.get(q);
                if (queue == null) {
                    continue; // the driver did not enable it
                }
                IoThread thread = ioThreads.get(q % ioThreads.size());
                workers[q] = new QueueWorker(name, queue, activation.signals(), processor, () -> stopping);
                sources[q] = thread.register("blk-" + name + "-q" + q, workers[q]);
                threads.add(thread);
            }
        }

        /** Drivers may kick before DRIVER_OK; look at every queue once. */
        void kickAll() {
            for (IoSource source : sources) {
                if (source != null) {
                    source.signal();
                }
            }
        }

        void signal(int queueIndex) {
            if (queueIndex >= 0 && queueIndex < sources.length && sources[queueIndex] != null) {
                sources[queueIndex].signal();
            }
        }

        boolean workerStopped(int queueIndex) {
            return queueIndex >= 0 && queueIndex < workers.length && workers[queueIndex] != null
                    && workers[queueIndex].stopped();
        }

        /**
         * Section 2.4: stops the sources, then waits until every I/O thread has finished the handler it
         * may be running (a barrier task runs after the sources of its iteration) and no request is in
         * flight.
         */
        void stop() {
            stopping = true;
            Arrays.stream(sources).filter(s -> s != null).forEach(IoSource::cancel);
            List<CountDownLatch> barriers = new ArrayList<>();
            for (IoThread thread : threads) {
                if (thread.inLoop()) {
                    continue; // reset from this very thread: its handler is not running
                }
                CountDownLatch barrier = new CountDownLatch(1);
                try {
                    thread.execute(barrier::countDown);
                } catch (RuntimeException stopped) {
                    continue; // a stopped loop runs no handler any more
                }
                barriers.add(barrier);
            }
            boolean interrupted = false;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RESET_TIMEOUT_SECONDS);
            try {
                for (CountDownLatch barrier : barriers) {
                    if (!barrier.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                        LOG.log(Level.ERROR, "disk " + name + ": an I/O thread did not reach the reset barrier in "
                                + RESET_TIMEOUT_SECONDS + " s");
                    }
                }
                if (!stats.awaitIdle(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                    LOG.log(Level.ERROR, "disk " + name + ": " + stats.requestsInFlight()
                            + " requests still in flight after reset");
                }
            } catch (InterruptedException e) {
                interrupted = true;
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
