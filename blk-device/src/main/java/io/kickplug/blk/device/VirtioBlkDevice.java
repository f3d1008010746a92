package io.kickplug.blk.device;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.poll.PollCounters;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollPolicy;
import io.kickplug.api.poll.PollStatus;
import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.KickDescriptors;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.blk.backend.SyncBackends;
import io.kickplug.blk.notify.NotifierRegistry;
import io.kickplug.blk.request.BlkLimits;
import io.kickplug.blk.tracked.TrackedRequests;
import java.io.FileDescriptor;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The virtio-blk device (VIRTIO 1.2 section 5.2). Queue {@code q} is served by the I/O thread its
 * {@link QueueMapping} names; a notification only signals that thread's source for the queue. Requests
 * are ordered by the disk's {@link TrackedRequests}; every backend is reached through the asynchronous contract
 * ({@link AsyncBlockBackend}): a blocking backend's calls run on a per-disk worker pool behind it
 * ({@link SyncBackends}), a non-blocking one's inline (see {@link QueueWorker} for the pipeline).
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
    private final QueueMapping mapping;
    private final BlkStats stats = new BlkStats();
    private final BlkMode mode;
    private final RequestProcessor processor;
    private final TrackedRequests tracked;
    /** The backend as the queues reach it: asynchronous, a worker pool in front of a blocking backend. */
    private final AsyncBlockBackend async;
    private final NotifierRegistry notifiers;
    /** Per queue: configured strategy and counters, kept across resets. */
    private final QueueStats[] queueStats;
    /** The transport's signals from the last activation, kept across resets for configuration changes. */
    private volatile DeviceSignals signals;
    private final Object lifecycle = new Object();
    private volatile Active active;
    /** False when the last reset gave up waiting for an I/O thread or a request in flight ({@link #quiescent}). */
    private volatile boolean lastStopComplete = true;
    /** Device-side polling: asked for, with these windows, by this policy (null: none bound). Under lifecycle. */
    private boolean pollRequested;
    private PollParams pollParams = PollParams.defaults();
    private PollPolicy pollPolicy;
    /** Per queue: what device-side polling found, kept across resets. */
    private final PollTally[] pollTallies;
    /** The ring format offered at the next negotiation: packed adds VIRTIO_F_RING_PACKED (section 2.8). */
    private volatile RingFormat ring = RingFormat.SPLIT;
    /** When split rings publish avail_event, from the next activation on. */
    private volatile AvailEventMode availEvent = AvailEventMode.ENABLE;

    /** A device made of {@code spec}; see {@link BlkDeviceSpec} for what each part must be. */
    public VirtioBlkDevice(BlkDeviceSpec spec) {
        this(spec.name(), spec.backend(), spec.readOnly(), spec.numQueues(), spec.queueSize(), spec.serial(),
                spec.ioThreads(), spec.mapping(), spec.trackedLock(), spec.workers(), spec.notifiers(), spec.filter());
    }

    private VirtioBlkDevice(String name, BlockBackend backend, boolean readOnly, int numQueues, int queueSize,
            byte[] serial, List<IoThread> ioThreads, QueueMapping mapping, TrackedLockKind trackedLock,
            int workers, NotifierRegistry notifiers, java.util.function.UnaryOperator<AsyncBlockBackend> filter) {
        if (numQueues < 1 || numQueues > 0xFFFF) {
            throw new IllegalArgumentException("numQueues " + numQueues + " is out of range 1..65535");
        }
        if (queueSize < 2 || !QueueLayout.isValidSize(queueSize)) {
            throw new IllegalArgumentException("queue size " + queueSize + " is not a power of two in 2.."
                    + QueueLayout.MAX_SIZE);
        }
        if (ioThreads.isEmpty()) {
            throw new IllegalArgumentException("a device needs at least one I/O thread");
        }
        if (mapping.queues() != numQueues) {
            throw new IllegalArgumentException("the queue mapping covers " + mapping.queues() + " queues, not "
                    + numQueues);
        }
        for (int q = 0; q < numQueues; q++) {
            if (mapping.threadOf(q) >= ioThreads.size()) {
                throw new IllegalArgumentException("the queue mapping names I/O thread " + mapping.threadOf(q)
                        + " of " + ioThreads.size());
            }
        }
        if (workers < 1) {
            throw new IllegalArgumentException("workers " + workers + " must be positive");
        }
        this.name = name;
        this.backend = backend;
        this.readOnly = readOnly || backend.readOnly();
        this.numQueues = numQueues;
        this.queueSize = queueSize;
        this.ioThreads = List.copyOf(ioThreads);
        this.mapping = mapping;
        // write_zeroes_may_unmap: the unmap flag may deallocate where the backend can discard (5.2.4).
        this.mode = new BlkMode(BlkLimits.DEFAULTS.withWriteZeroesMayUnmap(backend.supportsDiscard()));
        this.processor = new RequestProcessor(name, backend, this.readOnly, serial, stats, mode);
        this.tracked = new TrackedRequests(trackedLock, ioThreads.size());
        this.async = filter.apply(SyncBackends.async(backend, name, workers));
        this.notifiers = notifiers;
        this.queueStats = new QueueStats[numQueues];
        this.pollTallies = new PollTally[numQueues];
        for (int q = 0; q < numQueues; q++) {
            queueStats[q] = new QueueStats(name, q);
            pollTallies[q] = new PollTally();
            queueStats[q].poll = pollTallies[q]::snapshot;
        }
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
                | ring.feature()
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

    /**
     * The ring format to offer from the next feature negotiation on: {@link RingFormat#PACKED} offers
     * VIRTIO_F_RING_PACKED (a transport without the packed ring bundle leaves it out). A running driver keeps
     * its rings until it resets the device and negotiates again.
     */
    public void setRing(RingFormat format) {
        this.ring = java.util.Objects.requireNonNull(format, "format");
    }

    public RingFormat ring() {
        return ring;
    }

    /**
     * When split rings publish avail_event with EVENT_IDX (section 2.7.10), from the next activation on (a reset
     * and a new DRIVER_OK): after every pop as QEMU's 2014 virtio-blk did, or on re-enabling notifications as Linux
     * vhost does.
     */
    public void setAvailEvent(AvailEventMode mode) {
        this.availEvent = java.util.Objects.requireNonNull(mode, "mode");
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
            next.applyPolling();
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
    public boolean quiescent() {
        return active == null && lastStopComplete;
    }

    /** True when every I/O thread of the disk can wait on descriptors: vhost-user kicks then wake them directly. */
    @Override
    public boolean waitsOnKickDescriptors() {
        return ioThreads.stream().allMatch(IoThread::waitsOnDescriptors);
    }

    @Override
    public void queueNotify(int queueIndex) {
        if (queueIndex >= 0 && queueIndex < numQueues) {
            queueStats[queueIndex].availNotifications.increment();
        }
        Active current = active;
        if (current != null) {
            current.signal(queueIndex);
        }
        // Before DRIVER_OK or after a reset a notification is spurious: 2.7.10.2 says to tolerate it.
    }

    /**
     * Configures the completion-notification strategy of queue {@code queue}, or of every queue when it is
     * negative. An active queue switches at its next safe point on its I/O thread (within one loop
     * iteration); one whose strategy is not bound uses {@value CompletionNotifier#IMMEDIATE} until it is.
     *
     * @param strategy a name checked by {@link NotifierRegistry#checkName}
     * @return latches counted down once each active queue has switched
     * @throws IllegalArgumentException for a queue out of range
     */
    public List<CountDownLatch> setStrategy(String strategy, int queue) {
        if (queue >= numQueues) {
            throw new IllegalArgumentException("disk " + name + " has queues 0.." + (numQueues - 1) + ", not " + queue);
        }
        String checked = NotifierRegistry.checkName(strategy);
        for (int q = 0; q < numQueues; q++) {
            if (queue < 0 || q == queue) {
                queueStats[q].configured = checked;
            }
        }
        return requestSwitches(queue);
    }

    /** The registry's strategies changed: every active queue re-resolves its configured name. */
    public List<CountDownLatch> strategiesChanged() {
        return requestSwitches(-1);
    }

    private List<CountDownLatch> requestSwitches(int queue) {
        List<CountDownLatch> latches = new ArrayList<>();
        // Under the lifecycle lock: an activation in progress has either resolved its queues' channels from
        // the configuration written before this call, or is published (and asked to switch) here.
        synchronized (lifecycle) {
            requestSwitches(queue, active, latches);
        }
        return latches;
    }

    private void requestSwitches(int queue, Active current, List<CountDownLatch> latches) {
        for (int q = 0; q < numQueues; q++) {
            if (queue >= 0 && q != queue) {
                continue;
            }
            QueueWorker worker = current == null || q >= current.workers.length ? null : current.workers[q];
            if (worker == null) {
                // Not active: it will start with what its configured name resolves to; show that now.
                QueueStats stats = queueStats[q];
                stats.inUse = notifiers.resolve(stats.configured) != null ? stats.configured
                        : CompletionNotifier.IMMEDIATE;
                continue;
            }
            CountDownLatch latch = worker.channel().requestSwitch();
            if (!worker.channel().ioThread().inLoop()) {
                latches.add(latch); // waiting on the queue's own thread would only time out
            }
        }
    }

    /** The counters of every queue, in queue order. */
    public List<QueueCounters> queueCounters() {
        return Arrays.stream(queueStats).map(QueueStats::snapshot).toList();
    }

    /** Whether writes are refused (VIRTIO_BLK_F_RO is offered). */
    public boolean readOnly() {
        return readOnly;
    }

    /** The disk's request counters. */
    public BlkStats stats() {
        return stats;
    }

    /** The disk's tracked-requests list (lock kind, lock statistics). */
    public TrackedRequests trackedRequests() {
        return tracked;
    }

    /** Switches the tracked-requests lock; requests in flight finish under the lock they started with. */
    public void setTrackedLock(TrackedLockKind kind) {
        tracked.switchTo(kind);
    }

    /**
     * A port for requests of a server that is not a virtio transport (the NBD export): they go through this device's
     * tracked-requests list and its view of the backend (filters, worker pool), beside the guest's requests.
     *
     * @param detached run once when {@link DevicePort#detach} closes it
     * @param onClose told once when the port closes, either way
     */
    public DevicePort openPort(Runnable detached, java.util.function.Consumer<DevicePort> onClose) {
        return new DevicePort(name, backend, async, tracked, readOnly, detached, onClose);
    }

    /** Which I/O thread serves each queue. */
    public QueueMapping mapping() {
        return mapping;
    }

    /**
     * Releases the worker pool; call after the last {@link #reset()} (the transport's close), before the
     * backend is closed. Idempotent.
     */
    public void close() {
        synchronized (lifecycle) {
            stopActive();
        }
        try {
            async.close(); // the worker pool's threads, after the queued operations ran; not the backend
        } catch (java.io.IOException | RuntimeException e) {
            LOG.log(Level.ERROR, "disk " + name + ": worker pool did not stop: " + e);
        }
    }

    private void stopActive() {
        Active current = active;
        if (current == null) {
            return;
        }
        lastStopComplete = current.stop();
        active = null;
        requestSwitches(-1, null, new ArrayList<>()); // inactive queues show what they will start with
    }

    /**
     * Asks for device-side polling (or stops it): each queue's I/O thread polls the available ring with the
     * driver's notifications off, in windows sized by the bound {@link PollPolicy}. Takes effect at the I/O
     * threads' next loop iteration; while no policy is bound the request is kept and applied when one is.
     *
     * @param params the windows' parameters, or {@code null} to keep the current ones
     */
    public PollStatus setPolling(boolean enabled, PollParams params) {
        synchronized (lifecycle) {
            pollRequested = enabled;
            if (params != null) {
                pollParams = params;
            }
            applyPolling();
            return pollStatus();
        }
    }

    /**
     * Binds the poll policy ({@code null}: none, polling off). Queues that poll stop at a safe point on
     * their I/O thread (notifications on again, then a last look at the ring); nothing is lost.
     */
    public void setPollPolicy(PollPolicy policy) {
        synchronized (lifecycle) {
            pollPolicy = policy;
            applyPolling();
        }
    }

    private void applyPolling() {
        Active current = active;
        if (current != null) {
            current.applyPolling();
        }
    }

    /** Whether the queues poll now. Under lifecycle. */
    private boolean pollingActive() {
        return pollRequested && pollPolicy != null && pollParams.maxNs() > 0;
    }

    /** Polling settings and per-queue counters since the device was created. */
    public PollStatus pollStatus() {
        synchronized (lifecycle) {
            List<PollCounters> counters = Arrays.stream(pollTallies).map(PollTally::snapshot).toList();
            return new PollStatus(name, pollRequested, pollingActive(), pollParams, counters);
        }
    }

    /** One activation: a worker and a source per enabled queue, an I/O context per I/O thread. */
    private final class Active {
        private final IoSource[] sources;
        private final QueueWorker[] workers;
        private final IoContext[] contexts;
        /** Queues whose source was given a poll handler; under lifecycle. */
        private final boolean[] polled;
        private volatile boolean stopping;

        Active(DeviceActivation activation) {
            List<DeviceQueue> queues = activation.queues();
            int count = Math.min(queues.size(), numQueues);
            sources = new IoSource[count];
            workers = new QueueWorker[count];
            polled = new boolean[count];
            contexts = new IoContext[ioThreads.size()];
            QueueWorker.Shared shared = new QueueWorker.Shared(name, processor, processor.executor(), tracked, async, mode);
            for (int q = 0; q < count; q++) {
                DeviceQueue queue = queues.get(q);
                if (queue == null) {
                    continue; // the driver did not enable it
                }
                queue.setAvailEventMode(availEvent); // before its I/O thread serves it (register publishes it)
                int t = mapping.threadOf(q);
                if (contexts[t] == null) {
                    contexts[t] = new IoContext(ioThreads.get(t), t);
                }
                QueueChannel channel = new QueueChannel(name, queue, activation.signals(), contexts[t], queueStats[q],
                        notifiers);
                workers[q] = new QueueWorker(shared, queue, activation.signals(), contexts[t], channel,
                        pollTallies[q], () -> stopping);
                sources[q] = register(ioThreads.get(t), q, workers[q], activation.kicks());
            }
        }

        /**
         * The queue's source: on its kick descriptor when the transport has one and the thread waits on
         * descriptors (the I/O thread reads the kick itself, issue 12), otherwise signalled by queueNotify.
         */
        private IoSource register(IoThread thread, int q, QueueWorker worker, KickDescriptors kicks) {
            String sourceName = "blk-" + name + "-q" + q;
            FileDescriptor fd = kicks == null || q >= kicks.fds().size() ? null : kicks.fds().get(q);
            if (fd == null || !thread.waitsOnDescriptors()) {
                return thread.register(sourceName, worker);
            }
            QueueStats counters = queueStats[q];
            Runnable onKick = () -> {
                counters.availNotifications.increment();
                kicks.kicked().accept(q);
            };
            return thread.registerDescriptor(sourceName, fd, kicks.poller(), onKick, worker);
        }

        /** Sets every queue's polling as the device's settings say; under lifecycle. */
        void applyPolling() {
            boolean on = pollingActive();
            for (int q = 0; q < sources.length; q++) {
                if (sources[q] == null) {
                    continue;
                }
                try {
                    if (on) {
                        sources[q].setPoll(workers[q], pollPolicy.newWindow(pollParams));
                        polled[q] = true;
                    } else if (polled[q]) {
                        sources[q].setPoll(null, null);
                        polled[q] = false;
                    }
                } catch (RuntimeException e) {
                    // An I/O thread that cannot poll, or a failing policy: the queue keeps working on notifications.
                    LOG.log(Level.WARNING, "disk " + name + " queue " + q + ": polling not changed: " + e);
                }
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

        /**
         * Section 2.4: stops the sources, waits until every I/O thread has finished the handler it may be
         * running (a barrier task runs after the sources of its iteration), then until every request in
         * flight has completed with its true status: on the worker pool, then back on its I/O thread,
         * which pushes it into the used ring. When the reset runs on one of the disk's own I/O threads, it
         * runs that thread's completions itself while it waits.
         *
         * @return false when it gave up waiting (an I/O thread or a request still busy after the timeout)
         */
        boolean stop() {
            stopping = true;
            Arrays.stream(sources).filter(s -> s != null).forEach(IoSource::cancel);
            // Strategies' deferred decisions (end-of-iteration tasks) must not touch the rings after the reset;
            // a decision running now ends before the barrier task below runs on its thread.
            Arrays.stream(workers).filter(w -> w != null).forEach(w -> w.channel().close());
            List<CountDownLatch> barriers = new ArrayList<>();
            IoContext own = null;
            for (IoContext context : contexts) {
                if (context == null) {
                    continue;
                }
                IoThread thread = context.thread();
                if (thread.inLoop()) {
                    own = context; // reset from this very thread: its handler is not running
                    continue;
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
            boolean complete = true;
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(RESET_TIMEOUT_SECONDS);
            try {
                for (CountDownLatch barrier : barriers) {
                    if (!barrier.await(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)) {
                        complete = false;
                        LOG.log(Level.ERROR, "disk " + name + ": an I/O thread did not reach the reset barrier in "
                                + RESET_TIMEOUT_SECONDS + " s");
                    }
                }
                boolean idle;
                if (own == null) {
                    idle = stats.awaitIdle(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } else {
                    do {
                        own.runPending();
                        idle = stats.awaitIdle(1, TimeUnit.MILLISECONDS);
                    } while (!idle && System.nanoTime() - deadline < 0);
                }
                if (!idle) {
                    complete = false;
                    LOG.log(Level.ERROR, "disk " + name + ": " + stats.requestsInFlight()
                            + " requests still in flight after reset");
                }
            } catch (InterruptedException e) {
                interrupted = true;
                complete = false;
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            return complete;
        }
    }
}
