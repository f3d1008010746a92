package io.kickplug.vhost.backend;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The queue side of a {@link BackendDevice} start and stop: builds each wanted ring's {@link DeviceQueue} view over
 * the memory table at a start (split or packed, recovered from the inflight area while one is set, wrapped in a
 * {@link LoggedQueue} while logging) and saves each view's positions into its {@link Vring} at a stop. It owns
 * the inflight area from SET_INFLIGHT_FD. Runs on the connection's message thread only, like the device's
 * mutators; nothing here is on the request path (the device gets the views themselves).
 */
final class RingViews {

    /** The session's logger, as before these steps moved out of {@link BackendDevice}. */
    private static final Logger LOG = System.getLogger(BackendDevice.class.getName());

    private final String name;
    private final VirtqueueFactory queueFactory;
    private final MemoryTable memoryTable;
    private final RingDebugLog debug;
    private final DirtyLog dirtyLog;
    /** The inflight-tracking area from SET_INFLIGHT_FD, or {@code null}. */
    private InflightRegion inflight;
    private final AtomicLong resubmitted = new AtomicLong();

    RingViews(String name, VirtqueueFactory queueFactory, MemoryTable memoryTable, RingDebugLog debug,
            DirtyLog dirtyLog) {
        this.name = name;
        this.queueFactory = queueFactory;
        this.memoryTable = memoryTable;
        this.debug = debug;
        this.dirtyLog = dirtyLog;
    }

    /** Sets the inflight area ({@code null}: none) and returns the previous one, for the caller to release. */
    InflightRegion replaceInflight(InflightRegion region) {
        InflightRegion previous = inflight;
        inflight = region;
        return previous;
    }

    /**
     * Creates the view of every ring in {@code want} into {@code r.view} and {@code views}, running on
     * {@code runOn} (a {@link LoggedMemory} when {@code logNow}); a ring that cannot start is logged and its
     * error descriptor signalled. Returns the rings that started.
     */
    boolean[] start(Vring[] rings, boolean[] want, long features, boolean packed, GuestMemory memory,
            GuestMemory runOn, boolean logNow, List<DeviceQueue> views) {
        boolean[] runningNow = new boolean[rings.length];
        for (Vring r : rings) {
            if (!want[r.index]) {
                continue;
            }
            try {
                r.view = createView(r, features, packed, runOn);
                if (logNow) {
                    r.view = new LoggedQueue(r.view, dirtyLog, (LoggedMemory) runOn);
                }
                r.kicksSinceStart.set(0);
                r.callsSinceStart.set(0);
                debug.started(r, features, memory);
                views.set(r.index, r.view);
                runningNow[r.index] = true;
            } catch (Refused | GuestFaultException e) {
                LOG.log(Level.WARNING, "vhost-user " + name + ": queue " + r.index + " not started: "
                        + e.getMessage());
                RingEventFds.signalError(r);
            }
        }
        return runningNow;
    }

    /** The inflight-tracking queue inside {@code r}'s running view (under the dirty log's), or {@code null}. */
    static ForwardingInflightQueue inflightView(Vring r) {
        DeviceQueue inner = r.view instanceof LoggedQueue lq ? lq.wrapped() : r.view;
        return inner instanceof ForwardingInflightQueue q ? q : null;
    }

    /** After the device reset: saves the stopped view's positions in {@code r} for the next start. */
    static void saveStopped(Vring r) {
        r.nextAvail = r.view.nextAvail();
        r.nextUsed = r.view.nextUsed();
        DeviceQueue inner = r.view instanceof LoggedQueue lq ? lq.wrapped() : r.view;
        if (inner instanceof InflightQueue iq && iq.resubmitPending() > 0) {
            // Stopped before the previous back-end's requests were all taken: the next start
            // recovers them from the area again.
            r.nextUsed = -1;
        }
    }

    private DeviceQueue createView(Vring r, long features, boolean packed, GuestMemory memory) throws Refused {
        QueueLayout layout = RingParts.locate(memoryTable, packed, r);
        long used = layout.usedRing();
        if (r.log && memory instanceof LoggedMemory && r.logGuestAddr != used) {
            LOG.log(Level.WARNING, String.format("vhost-user %s: queue %d's log_guest_addr 0x%x is not its used"
                    + " ring's guest address 0x%x: used-ring writes are marked at the latter", name, r.index,
                    r.logGuestAddr, used));
        }
        r.availGpa = layout.availRing();
        r.usedGpa = used;
        int nextUsed = r.nextUsed;
        if ((features & VirtioFeatures.RING_PACKED) != 0) {
            // The packed ring keeps no index in memory: both positions come from SET_VRING_BASE (or the last
            // stop), or from the inflight area's packed region, which also resubmits what an earlier back-end
            // left in flight (PackedInflightQueue).
            int usedPos = nextUsed >= 0 ? nextUsed : r.nextAvail;
            ByteBuffer area = inflightArea(r, true);
            if (area != null) {
                return PackedInflightQueue.start(name, r.index, area, memory, layout, features, r.nextAvail, usedPos,
                        queueFactory, resubmitted);
            }
            return queueFactory.createDeviceQueue(memory, r.index, layout, features, r.nextAvail, usedPos);
        }
        ByteBuffer area = inflightArea(r, false);
        if (area != null) {
            return InflightQueue.start(name, r.index, area, memory, layout, features, r.nextAvail, queueFactory,
                    resubmitted);
        }
        if (nextUsed < 0) {
            // After SET_VRING_BASE the used index is whatever the ring holds (libvhost-user reads it too).
            nextUsed = memory.readU16(used + 2) & 0xffff;
            if (nextUsed != r.nextAvail) {
                LOG.log(Level.WARNING, "vhost-user " + name + ": queue " + r.index + " starts with used index "
                        + nextUsed + " but available index " + r.nextAvail + ": " + ((r.nextAvail - nextUsed) & 0xffff)
                        + " requests of an earlier backend were lost (no inflight tracking)");
            }
        }
        return queueFactory.createDeviceQueue(memory, r.index, layout, features, r.nextAvail, nextUsed);
    }

    /**
     * Queue {@code r}'s part of the inflight area, or {@code null} without one in its ring format's layout (warned
     * when the area has the other layout: it was made before the features changed). Refuses a queue too large.
     */
    private ByteBuffer inflightArea(Vring r, boolean packed) throws Refused {
        InflightRegion area = inflight;
        if (area == null || r.index >= area.queueCount()) {
            return null;
        }
        if (area.packed() != packed) {
            LOG.log(Level.WARNING, "vhost-user " + name + ": queue " + r.index + " is " + (packed ? "packed" : "split")
                    + " but the inflight area has the " + (packed ? "split" : "packed") + " layout (made before the"
                    + " features changed); no inflight tracking");
            return null;
        }
        if (r.num > area.queueSize()) {
            throw new Refused("queue " + r.index + " size " + r.num + " exceeds the inflight area's "
                    + area.queueSize());
        }
        return area.queue(r.index);
    }
}
