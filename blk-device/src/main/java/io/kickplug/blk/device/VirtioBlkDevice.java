package io.kickplug.blk.device;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtioFeatures;
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
    private final RequestProcessor processor;
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
        this.processor = new RequestProcessor(name, backend, this.readOnly, serial, stats);
    }

    @Override
    public int deviceId() {
        return DeviceIds.BLOCK;
    }

    @Override
    public long offeredFeatures() {
        long features = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC | VirtioFeatures.RING_EVENT_IDX
                | VirtioBlk.F_SEG_MAX | VirtioBlk.F_BLK_SIZE | VirtioBlk.F_FLUSH;
        if (numQueues > 1) {
            features |= VirtioBlk.F_MQ;
        }
        if (readOnly) {
            features |= VirtioBlk.F_RO;
        }
        return features;
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

    /** Section 5.2.4: capacity in 512-byte sectors, seg_max, blk_size and num_queues; the rest reads 0. */
    @Override
    public long readConfig(int offset, int width) {
        // seg_max leaves room for the header and status descriptors of a request.
        byte[] config = BlkConfigSpace.layout(processor.capacitySectors(), queueSize - 2, VirtioBlk.SECTOR_SIZE,
                numQueues);
        return BlkConfigSpace.read(config, offset, width);
    }

    /** No field is driver-writable without VIRTIO_BLK_F_CONFIG_WCE, which is not offered: ignored. */
    @Override
    public void writeConfig(int offset, int width, long value) {
    }

    @Override
    public void activate(DeviceActivation activation) {
        synchronized (lifecycle) {
            if (active != null) {
                // The transport resets before it activates again; waiting for I/O threads here could
                // deadlock with a transport that holds its lock while activating.
                throw new IllegalStateException("disk " + name + ": activated twice without a reset");
            }
            Active next = new Active(activation);
            active = next;
            next.kickAll();
        }
    }

    @Override
    public void reset() {
        synchronized (lifecycle) {
            stopActive();
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
