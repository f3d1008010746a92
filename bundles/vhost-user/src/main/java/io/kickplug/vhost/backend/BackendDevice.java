package io.kickplug.vhost.backend;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.KickDescriptors;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.vhost.protocol.Fds;
import io.kickplug.vhost.protocol.VhostUser;
import java.io.Closeable;
import java.io.FileDescriptor;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The device side of one vhost-user connection: it owns the vrings, the call and error eventfds and the device's
 * activation, and is the device's {@link DeviceSignals}. The memory table is in {@link SessionMemory}; the queue
 * views of a start, and the inflight area they recover from, in {@link RingViews}.
 * {@link MessageHandler} parses and checks the front-end's messages and calls in here; what needs this state to
 * be checked (a ring address outside the memory table, a region that is not there) is refused here.
 *
 * <p>The device runs the queues that are <em>ready</em>: configured (SET_VRING_NUM and SET_VRING_ADDR),
 * started (a kick descriptor arrived and no GET_VRING_BASE since) and enabled (SET_VRING_ENABLE 1, or
 * implicitly when VHOST_USER_F_PROTOCOL_FEATURES was not acked). Whenever that set, the memory table or the
 * features change, the device is reset (waiting for in-flight requests, VIRTIO 1.2 section 2.4), each
 * running queue's indices are saved, and the device is activated again with the new set. GET_VRING_BASE
 * therefore returns an index with nothing in flight, and QEMU's stop-and-restart (a short first start,
 * then Linux's) works.
 *
 * <p>Inflight I/O tracking (INFLIGHT_SHMFD): while an area is set ({@link #setInflight}) every started queue
 * is wrapped in an {@link InflightQueue} that records taken and used heads, and a start first recovers the
 * area as libvhost-user does, resubmitting heads an earlier back-end took and never used.
 *
 * <p>Dirty logging for live migration (vhost-user.rst "Migration"): while VHOST_F_LOG_ALL is acked and a log base
 * was given, each start runs the device on {@link LoggedMemory} and wraps every queue view in a {@link LoggedQueue},
 * so every page the device writes is marked in the {@link DirtyLog}; otherwise the device gets the plain memory and
 * views and pays nothing. LOG_ALL on or off restarts the device like any feature change. The marks a session's log
 * still holds when the session ends go to the export's {@link MarksCarry}, and the next session's first log base
 * gets them before the device writes anything.
 *
 * <p>Kicks (issue 12) reach the device through its own I/O threads or a {@link KickPoller} thread
 * ({@link KickRegistration}); the call and error eventfds are in {@link RingEventFds}, the ring debug log in
 * {@link RingDebugLog}.
 *
 * <p>Threading: the mutators run on the connection's message thread only; kicks arrive on the device's I/O
 * threads (or the {@link KickPoller} thread); {@link #usedBuffer} and {@link #deviceError} on I/O threads.
 */
final class BackendDevice implements DeviceSignals, Closeable {

    private static final Logger LOG = System.getLogger(BackendDevice.class.getName());

    private final String name;
    private final VirtioDevice device;
    private final VirtqueueFactory queueFactory;
    private final KickRegistration kicks;
    private final RingDebugLog debug;
    private final RingEventFds eventFds;
    private final Vring[] rings;
    /** The memory table and the memory built over it. */
    private final SessionMemory sessionMemory;
    /** Builds the rings' views at a start and keeps the inflight area. */
    private final RingViews ringViews;
    /** The dirty-page log of live migration (SET_LOG_BASE); marks go to it while {@link #logging}. */
    private final DirtyLog dirtyLog;
    /**
     * Whether the running device writes through {@link LoggedMemory} and {@link LoggedQueue}: VHOST_F_LOG_ALL acked
     * and a log base given. Decided at each start, so a device that does not log runs the plain memory and views.
     */
    private volatile boolean logging;

    private volatile long ackedFeatures;
    private boolean featuresSet;
    /** True while the device is activated; its queues are those with a non-null view. */
    private boolean running;
    /** Queues the kick poller may forward, replaced as a whole. */
    private volatile boolean[] runningQueues;
    private volatile boolean needsReset;
    private volatile String lastFault;
    private final AtomicLong activations = new AtomicLong();
    /** The back-end request channel from SET_BACKEND_REQ_FD. */
    private final BackendRequests backendRequests;
    /** False once a device reset failed: mappings are then never unmapped explicitly ({@link MappingRelease}). */
    private boolean resetsClean = true;
    /** The marks earlier sessions left uncollected (into this session's log) and those this one leaves. */
    private final LogHandover handover;

    BackendDevice(String name, VirtioDevice device, VirtqueueFactory queueFactory, GuestMemoryFactory memoryFactory,
            MarksCarry carry) throws IOException {
        this.name = name;
        this.handover = new LogHandover(name, carry);
        this.backendRequests = new BackendRequests(name);
        this.device = device;
        this.queueFactory = queueFactory;
        this.sessionMemory = new SessionMemory(name, memoryFactory);
        this.rings = new Vring[device.queueCount()];
        for (int i = 0; i < rings.length; i++) {
            rings[i] = new Vring(i);
        }
        this.runningQueues = new boolean[rings.length];
        this.debug = new RingDebugLog(name);
        this.dirtyLog = new DirtyLog(name);
        this.eventFds = new RingEventFds(rings, debug);
        this.ringViews = new RingViews(name, queueFactory, sessionMemory.table(), debug, dirtyLog);
        this.kicks = new KickRegistration(name, device, this::kicked);
    }

    int queueCount() {
        return rings.length;
    }

    /**
     * Virtio features offered: the device's plus VHOST_USER_F_PROTOCOL_FEATURES, and VIRTIO_F_RING_PACKED when the
     * packed ring bundle is there (the front-end decides: QEMU's {@code packed=on} property).
     */
    long offeredFeatures() {
        return device.offeredFeatures() | VhostUser.F_PROTOCOL_FEATURES | VhostUser.F_LOG_ALL
                | (queueFactory.supports(RingFormat.PACKED) ? VirtioFeatures.RING_PACKED : 0);
    }

    /** Whether the front-end acked VIRTIO_F_RING_PACKED: the rings are packed (VIRTIO 1.2 section 2.8). */
    boolean packed() {
        return (ackedFeatures & VirtioFeatures.RING_PACKED) != 0;
    }

    // Features.

    /** SET_FEATURES with features already checked against {@link #offeredFeatures()}. */
    void setFeatures(long f) throws Refused {
        long virtio = f & ~VHOST_ONLY;
        if (!device.acceptsFeatures(virtio)) {
            throw new Refused(String.format("the device does not accept features 0x%x", virtio));
        }
        if ((virtio & VirtioFeatures.VERSION_1) == 0) {
            LOG.log(Level.INFO, "vhost-user " + name + ": front-end acked features without VIRTIO_F_VERSION_1");
        }
        if (((f ^ ackedFeatures) & VhostUser.F_LOG_ALL) != 0 && LOG.isLoggable(Level.INFO)) {
            LOG.log(Level.INFO, "vhost-user " + name + ": dirty logging "
                    + ((f & VhostUser.F_LOG_ALL) != 0 ? "on" + (dirtyLog.hasBitmap() ? "" : " (no log base yet)")
                            : "off") + "; " + dirtyLog.pagesMarked() + " pages marked so far");
        }
        // A change of VHOST_F_LOG_ALL restarts the device like any other feature change: the reset waits for the
        // requests in flight (written and marked, or written before logging began, which the front-end's first
        // pass copies), and the next start runs the logged or the plain views.
        stopDevice();
        ackedFeatures = f;
        featuresSet = true;
        reconcile();
    }

    /** Feature bits of vhost-user itself, not the device's: never passed on to it. */
    private static final long VHOST_ONLY = VhostUser.F_PROTOCOL_FEATURES | VhostUser.F_LOG_ALL;

    /** Whether the front-end acked VHOST_F_LOG_ALL and gave a log base: the device must mark what it writes. */
    private boolean wantsLogging() {
        return (ackedFeatures & VhostUser.F_LOG_ALL) != 0 && dirtyLog.hasBitmap();
    }

    // Dirty logging (vhost-user.rst "Migration").

    /**
     * SET_LOG_BASE with the bitmap mapped: it replaces the previous one at once, running device or not (see
     * {@link DirtyLog}); a device that runs unlogged while LOG_ALL is acked (the base came after the features)
     * restarts logged.
     */
    void setLogBase(DirtyLog.Bitmap bitmap) {
        handover.carryInto(bitmap);
        dirtyLog.replace(bitmap);
        LOG.log(Level.INFO, "vhost-user " + name + ": dirty log of " + bitmap.pages() / 8 + " bytes ("
                + bitmap.pages() + " pages of guest physical address)");
        if (running && wantsLogging() != logging) {
            stopDevice();
            reconcile();
        }
    }

    /** Whether the running device marks its writes in the dirty log. */
    boolean logging() {
        return logging;
    }

    /** The dirty log, for status and tests. */
    DirtyLog dirtyLog() {
        return dirtyLog;
    }

    // Memory.

    List<MemoryTable.Region> regions() {
        return sessionMemory.table().regions();
    }

    /** SET_MEM_TABLE: maps the checked regions (not mapped yet, one descriptor each) and replaces the table. */
    void replaceMemory(List<MemoryTable.Region> desc, FileDescriptor[] fds) throws Refused {
        List<MemoryTable.Region> fresh = sessionMemory.mapAll(desc, fds);
        stopDevice();
        sessionMemory.replace(fresh, resetsClean);
        reconcile();
    }

    /** ADD_MEM_REG with a checked region (not mapped yet). */
    void addRegion(FileDescriptor fd, MemoryTable.Region checked) throws Refused {
        MemoryTable.Region r = SessionMemory.map(fd, checked);
        stopDevice();
        sessionMemory.add(r);
        reconcile();
    }

    /** REM_MEM_REG: refused when no region has that identity. */
    void removeRegion(long gpa, long size, long uva) throws Refused {
        sessionMemory.checkKnown(gpa, size, uva);
        stopDevice();
        sessionMemory.remove(gpa, size, uva, resetsClean);
        reconcile();
    }

    // Rings (the index is checked by the caller).

    /** SET_VRING_NUM with a checked size. */
    void setRingSize(int index, int num) {
        Vring r = rings[index];
        stopIfRunning(r);
        r.num = num;
        reconcile();
    }

    /**
     * SET_VRING_BASE, checked by the caller. Split: the 16-bit available index; the used index is read from the
     * used ring at start. Packed (vhost-user.rst): bits 0-14 the next descriptor, bit 15 the avail wrap counter,
     * bits 16-30 the next used descriptor, bit 31 the used wrap counter; a front-end that sends only the low
     * half (upper half 0) means the used position equals the available one.
     */
    void setRingBase(int index, int base) {
        Vring r = rings[index];
        stopIfRunning(r);
        r.nextAvail = base & 0xffff;
        r.nextUsed = -1;
        if (packed()) {
            r.nextUsed = (base >>> 16) != 0 ? base >>> 16 : base & 0xffff;
        }
        reconcile();
    }

    /** SET_VRING_ADDR: refused when a part of the ring lies outside the memory table. */
    void setRingAddresses(int index, long desc, long used, long avail, boolean log, long logGuestAddr)
            throws Refused {
        Vring r = rings[index];
        if (r.addressesSet && r.descUser == desc && r.usedUser == used && r.availUser == avail) {
            // Only the log flag or address changed (QEMU at the start and end of a migration): no restart. The used
            // ring's writes are marked at their guest physical address, which is QEMU's log_guest_addr.
            r.log = log;
            r.logGuestAddr = logGuestAddr;
            return;
        }
        if (sessionMemory.table().count() == 0) {
            throw new Refused("queue " + r.index + " addresses given before any memory region");
        }
        RingParts.check(sessionMemory.table(), packed(), r, r.num > 0 ? r.num : device.maxQueueSize(), desc, avail, used);
        stopIfRunning(r);
        r.descUser = desc;
        r.availUser = avail;
        r.usedUser = used;
        r.log = log;
        r.logGuestAddr = logGuestAddr;
        r.addressesSet = true;
        reconcile();
    }

    /** SET_VRING_KICK: the ring starts. */
    void setKick(int index, FileDescriptor fd) {
        Vring r = rings[index];
        FileDescriptor old = r.kick;
        if (kicks.deviceWaits() && old != null) {
            // The device's I/O threads watch the old descriptor while it runs: stop it before closing that one.
            stopIfRunning(r);
        }
        r.kick = fd;
        kicks.register(r.index, fd);
        if (old != null) {
            Fds.close(old);
        }
        r.started = true;
        if ((ackedFeatures & VhostUser.F_PROTOCOL_FEATURES) == 0) {
            // vhost-user.rst "Starting and stopping rings": without the feature a started ring is enabled.
            r.enabled = true;
        }
        boolean wasRunning = r.view != null;
        reconcile();
        if (wasRunning) {
            device.queueNotify(r.index); // a kick may have gone to the old descriptor
        }
    }

    /** SET_VRING_CALL; a null {@code fd} is NOFD: the driver polls this queue ({@link RingEventFds#setCall}). */
    void setCall(int index, FileDescriptor fd) {
        eventFds.setCall(index, fd, sessionMemory.memory());
    }

    /** SET_VRING_ERR; a null {@code fd} is NOFD. */
    void setErr(int index, FileDescriptor fd) {
        eventFds.setErr(index, fd);
    }

    /** SET_VRING_ENABLE. */
    void setEnabled(int index, boolean enabled) {
        rings[index].enabled = enabled;
        reconcile();
    }

    /**
     * GET_VRING_BASE: stops the ring and returns its next available index, with nothing in flight.
     *
     * <p>The stop point of vhost-user.rst: after the reply the back-end neither writes guest memory nor notifies
     * on this ring. The requests in flight are <em>completed</em> before the reply (the device reset waits for them:
     * written, marked in the dirty log while logging is on, pushed and notified), not left in the inflight area
     * for the destination to resubmit: mainline QEMU does not migrate the inflight area, so a destination's
     * back-end would never see them, and the destination's QEMU makes a fresh area for its own back-end. Completing
     * them is what loses no write across a live migration, and the inflight area stays consistent (nothing in
     * flight) for a front-end that keeps it. So are the requests a restart recovered from the inflight area and
     * the device has not taken again yet ({@link #awaitResubmitted}). A reset that gives up after its timeout (a
     * backend request that hangs) is logged as an error: that request may still write after the reply.
     */
    int stopRing(int index) {
        Vring r = rings[index];
        if (r.view != null) {
            awaitResubmitted();
            stopDevice();
        }
        r.started = false;
        kicks.close(r);
        // libvhost-user closes the call descriptor too; the front-end sends a new one with the next start.
        RingEventFds.closeCall(r);
        // Packed: the used position and its wrap counter in the upper half, as SET_VRING_BASE takes them back.
        int base = packed() && r.nextUsed >= 0 ? r.nextAvail | r.nextUsed << 16 : r.nextAvail;
        if (!resetsClean && dirtyLog.hasBitmap()) {
            LOG.log(Level.ERROR, "vhost-user " + name + ": queue " + index + " stopped (GET_VRING_BASE) during dirty"
                    + " logging while a request the device reset gave up on may still write guest memory: a live"
                    + " migration may miss that write");
        }
        reconcile();
        return base;
    }

    /** How long a GET_VRING_BASE stop waits for the device to take the requests the inflight recovery put back. */
    private static final long RESUBMIT_WAIT_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);

    /**
     * Before a GET_VRING_BASE stop: lets the device take again the requests a restart recovered from the inflight
     * area and has not handed out yet, so that the reset that follows completes them. The stop's index counts
     * them as taken (the available ring continues after them), and a live migration's destination starts there on
     * a fresh inflight area (QEMU does not migrate it): requests still waiting to be resubmitted would be lost, and
     * the guest would wait for them for ever. Each such queue is notified (its drain takes the recovered entries
     * first), then this (the message thread) waits, bounded, until none is left.
     */
    private void awaitResubmitted() {
        long deadline = System.nanoTime() + RESUBMIT_WAIT_NANOS;
        for (Vring r : rings) {
            ForwardingInflightQueue q = RingViews.inflightView(r);
            if (q == null || q.resubmitPending() == 0) {
                continue;
            }
            device.queueNotify(r.index);
            while (q.resubmitPending() > 0 && !needsReset && System.nanoTime() - deadline < 0) {
                java.util.concurrent.locks.LockSupport.parkNanos(java.util.concurrent.TimeUnit.MILLISECONDS.toNanos(1));
            }
            if (q.resubmitPending() > 0) {
                LOG.log(Level.ERROR, "vhost-user " + name + ": queue " + r.index + " stopped (GET_VRING_BASE) with "
                        + q.resubmitPending() + " requests of an earlier back-end not resubmitted yet"
                        + (needsReset ? " (the device needs a reset)" : "") + ": a live migration's destination"
                        + " would not see them");
            }
        }
    }

    // Inflight I/O tracking.

    /** SET_INFLIGHT_FD with the area already mapped. */
    void setInflight(InflightRegion region) {
        stopDevice();
        InflightRegion previous = ringViews.replaceInflight(region);
        MappingRelease.release(name, resetsClean, null, previous);
        reconcile();
    }

    // Configuration space (offset and size checked against the 256-byte space).

    int readConfigByte(int offset) {
        return (int) device.readConfig(offset, 1);
    }

    void writeConfigByte(int offset, int value) {
        device.writeConfig(offset, 1, value);
    }

    // Device start and stop.

    /** Stops the device when {@code r} is one of its running queues (before changing that queue). */
    private void stopIfRunning(Vring r) {
        if (r.view != null) {
            stopDevice();
        }
    }

    /**
     * Resets the device if it runs (waiting for in-flight requests), saving each running queue's indices.
     * {@link #reconcile()} starts it again.
     */
    private void stopDevice() {
        if (!running) {
            return;
        }
        runningQueues = new boolean[rings.length];
        int[] usedBefore = debug.enabled() ? RingDebugLog.publishedUsed(rings, sessionMemory.memory()) : null;
        boolean clean;
        try {
            device.reset();
            // A reset that gave up waiting leaves a request that may still write guest memory.
            clean = device.quiescent();
        } catch (RuntimeException e) {
            clean = false;
            LOG.log(Level.ERROR, "vhost-user " + name + ": device reset failed", e);
        }
        resetsClean &= clean;
        running = false;
        logging = false;
        for (Vring r : rings) {
            if (r.view != null) {
                if (clean) {
                    notifyCompletedByStop(r);
                }
                debug.stopped(r, usedBefore == null ? -1 : usedBefore[r.index], sessionMemory.memory());
                RingViews.saveStopped(r);
                r.view = null;
            }
        }
    }

    /**
     * Makes the notification decision the device reset skipped. The reset completes the requests in flight
     * into the used ring, but a stopping queue takes no more notification decisions (its channel closes before
     * the reset waits for them), which is right for a virtio reset: the driver reset the device and expects
     * nothing. A vhost-user stop is none: the guest's driver keeps running (the front-end stops the rings to
     * change the memory table, to enable another queue, or because this back-end's export ends at a bundle
     * update and QEMU reconnects to the next one) and waits for an interrupt for each request it handed over.
     * Without one, a driver whose requests on the queue were all among those completed by the stop waits for
     * ever, as nothing is left to complete after the restart (issue 11: BackendCrashIT's guest stalled after
     * {@code felix:update io.kickplug.blk}). So notify now, as VIRTIO 1.2 section 2.7.7.2 says (EVENT_IDX: the
     * used index passed {@code used_event}; else unless NO_INTERRUPT), on the call descriptor the front-end
     * still watches. Only after a reset that left no I/O thread in the queue, which is then confined to this
     * (the message) thread; the reset's wait for the requests orders their pushes before this.
     */
    private void notifyCompletedByStop(Vring r) {
        try {
            if (r.view.needsNotification()) {
                debug.notifiedAfterStop(r);
                usedBuffer(r.index);
            }
        } catch (GuestFaultException e) {
            // A ring broken by the guest: the next start refuses it and signals the error descriptor.
            debug.notNotifiedAfterStop(r, e);
        }
    }

    private boolean ready(Vring r) {
        return r.configured() && r.started && r.enabled && sessionMemory.memory() != null;
    }

    /** Makes the running set equal the ready set: stops and restarts the device when they differ. */
    private void reconcile() {
        boolean[] want = new boolean[rings.length];
        boolean any = false;
        boolean same = running;
        for (Vring r : rings) {
            want[r.index] = ready(r);
            any |= want[r.index];
            same &= want[r.index] == (r.view != null);
        }
        if (same && running) {
            return;
        }
        stopDevice();
        if (!any) {
            // Every ring stopped: the front-end resets or pauses the device; a latched fault is cleared.
            needsReset = false;
            return;
        }
        if (needsReset) {
            LOG.log(Level.WARNING, "vhost-user " + name + ": not starting the device: it needs a reset after "
                    + lastFault);
            return;
        }
        start(want);
    }

    private void start(boolean[] want) {
        long features = ackedFeatures & ~VHOST_ONLY;
        boolean logNow = wantsLogging();
        if ((ackedFeatures & VhostUser.F_LOG_ALL) != 0 && !logNow) {
            LOG.log(Level.WARNING, "vhost-user " + name + ": VHOST_F_LOG_ALL acked but no SET_LOG_BASE yet: the"
                    + " device does not log until one arrives");
        }
        if ((ackedFeatures & VhostUser.F_LOG_ALL) == 0) {
            handover.deviceStartsUnlogged();
        }
        GuestMemory memory = sessionMemory.memory();
        GuestMemory runOn = logNow ? new LoggedMemory(memory, dirtyLog) : memory;
        if (!featuresSet) {
            LOG.log(Level.INFO, "vhost-user " + name + ": rings started before SET_FEATURES; using no features");
        }
        List<DeviceQueue> views = new ArrayList<>(Collections.nCopies(rings.length, (DeviceQueue) null));
        boolean[] runningNow = ringViews.start(rings, want, features, packed(), memory, runOn, logNow, views);
        if (Arrays.equals(runningNow, new boolean[rings.length])) {
            return;
        }
        List<DeviceQueue> list = Collections.unmodifiableList(views);
        KickDescriptors kickFds = kicks.descriptors(rings, runningNow);
        // Publish the running set before activating: a kick that arrives from now on reaches the device.
        // Published after activate(), a kick landing between the activation's look at every queue and the
        // publication was dropped, and a request the driver added after that look waited forever (issue 13:
        // NOFD + EVENT_IDX, the driver kicks once and only when avail_event asks). A kick that reaches the
        // device before activate() sets its queues is harmless: the activation looks at every queue after it.
        runningQueues = runningNow;
        logging = logNow;
        try {
            device.activate(new DeviceActivation(features, runOn, list, this, kickFds));
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "vhost-user " + name + ": device activation failed", e);
            try {
                device.reset(); // it may have started some queues before failing
                resetsClean &= device.quiescent();
            } catch (RuntimeException again) {
                resetsClean = false;
            }
            runningQueues = new boolean[rings.length];
            logging = false;
            for (Vring r : rings) {
                r.view = null;
            }
            return;
        }
        running = true;
        activations.incrementAndGet();
        debug.running(runningNow);
    }

    /**
     * RESET_OWNER / RESET_DEVICE: stop the device, forget every ring and the inflight area (the front-end sends
     * it again with the next start) and unmap this back-end's mapping of it. RESET_OWNER ends the session
     * (vhost-user.rst: the front-end no longer owns the connection), so its memory is unmapped too, as DPDK
     * does. RESET_DEVICE keeps the memory, as libvhost-user does: QEMU sends only the regions that changed
     * since its last table (its shadow copy), so after a RESET_DEVICE it would not send them again.
     */
    void resetDevice(boolean endOfSession) {
        stopDevice();
        for (int i = 0; i < rings.length; i++) {
            closeRing(rings[i]);
            rings[i] = new Vring(i);
        }
        ackedFeatures = 0;
        featuresSet = false;
        dirtyLog.clear();
        if (endOfSession) {
            releaseMemory();
        } else {
            InflightRegion area = ringViews.replaceInflight(null);
            MappingRelease.release(name, resetsClean && !running, null, area);
        }
        needsReset = false;
        lastFault = null;
    }

    /** After the device stopped: drops and unmaps every memory region and the inflight area's mapping. */
    private void releaseMemory() {
        InflightRegion area = ringViews.replaceInflight(null);
        List<MemoryTable.Region> regions = sessionMemory.clear();
        MappingRelease.release(name, resetsClean && !running, regions, area);
    }

    private void closeRing(Vring r) {
        kicks.close(r);
        RingEventFds.close(r);
    }

    // Kicks and signals.

    private void kicked(int queue) {
        // runningQueues is published (volatile) before the device is activated (start()), so a kick that
        // passes this check after the activation looked at the rings reaches the device.
        boolean[] q = runningQueues;
        debug.kick(rings, queue, queue < q.length && q[queue], needsReset);
        if (!needsReset && queue < q.length && q[queue]) {
            device.queueNotify(queue);
        }
        // Otherwise the queue is not running: activation looks at every queue once (2.7.10.2 tolerates
        // spurious and early notifications).
    }

    @Override
    public void usedBuffer(int queueIndex) {
        eventFds.usedBuffer(queueIndex);
    }

    @Override
    public void configChanged() {
        backendRequests.configChanged();
    }

    /** SET_BACKEND_REQ_FD: replaces the back-end request channel. */
    void setBackendChannel(FileDescriptor fd, boolean replyAck) throws Refused {
        backendRequests.replace(fd, replyAck);
    }

    @Override
    public void deviceError(GuestFaultException fault) {
        if (needsReset) {
            return;
        }
        needsReset = true;
        lastFault = fault.getMessage();
        LOG.log(Level.WARNING, "vhost-user " + name + ": device needs reset: " + fault.getMessage()
                + " (queues stop until the front-end stops and restarts the device)");
        // There is no status register on vhost-user: tell the front-end through the error eventfds.
        for (Vring r : rings) {
            RingEventFds.signalError(r);
        }
    }

    @Override
    public boolean needsReset() {
        return needsReset;
    }

    /** Ends the session: stops the device, closes every descriptor and the kick thread. */
    @Override
    public void close() {
        try {
            stopDevice();
        } finally {
            try {
                if ((ackedFeatures & VhostUser.F_LOG_ALL) != 0 && dirtyLog.hasBitmap()) {
                    handover.leave(dirtyLog, resetsClean);
                }
            } catch (RuntimeException e) {
                LOG.log(Level.ERROR, "vhost-user " + name + ": keeping the dirty log's uncollected marks failed", e);
            }
            for (Vring r : rings) {
                closeRing(r);
            }
            kicks.close();
            backendRequests.close();
            releaseMemory();
        }
    }

    /** A snapshot for the shell, with the message handler's own counters. */
    SessionStatus status(boolean owner, long protocolFeatures, long messages, long refusals, String lastRefusal) {
        int runningCount = 0;
        StringBuilder nofd = new StringBuilder();
        boolean[] q = runningQueues;
        for (int i = 0; i < q.length; i++) {
            if (q[i]) {
                runningCount++;
            }
            if (rings[i].callNoFd) {
                nofd.append(nofd.length() == 0 ? "" : ",").append(i);
            }
        }
        return new SessionStatus(owner, ackedFeatures, protocolFeatures, sessionMemory.regionCount(), sessionMemory.totalBytes(),
                runningCount, nofd.toString(), messages, refusals, kicks.kicksSeen(), eventFds.interrupts(),
                activations.get(), needsReset, lastRefusal, logging, dirtyLog.pagesMarked(), handover.carriedPages());
    }
}
