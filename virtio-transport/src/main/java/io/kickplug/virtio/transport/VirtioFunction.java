package io.kickplug.virtio.transport;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtioFeatures;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The transport-independent half of a virtio transport: device status (section 2.1), feature
 * negotiation (2.2, 3.1), queue configuration, activation at DRIVER_OK, reset (2.4), the configuration
 * generation (2.5) and the DEVICE_NEEDS_RESET latch. The MMIO and PCI register decoders sit on top.
 *
 * <p>Register accesses arrive on vCPU threads; they are serialised by this object's monitor except the
 * hot paths (notify, interrupt status), which do not take it.
 */
public final class VirtioFunction implements DeviceSignals {
    private static final Logger LOG = Logger.getLogger(VirtioFunction.class.getName());
    public static final int NO_VECTOR = 0xffff;

    private final VirtioDevice device;
    private final GuestMemory memory;
    /** Where the device views of the rings come from (the virtqueue bundle's service). */
    private final VirtqueueFactory rings;
    private volatile InterruptSink sink;
    private final QueueConfig[] queues;

    private volatile int status;
    private long driverFeatures;
    private long negotiated;
    private volatile boolean active;
    private volatile boolean needsReset;
    private volatile int configGeneration;
    private final AtomicLong ignoredNotifies = new AtomicLong();
    private volatile String lastFault;

    public VirtioFunction(VirtioDevice device, GuestMemory memory, VirtqueueFactory rings) {
        this.device = device;
        this.memory = memory;
        this.rings = java.util.Objects.requireNonNull(rings, "rings");
        this.queues = new QueueConfig[device.queueCount()];
        for (int i = 0; i < queues.length; i++) {
            queues[i] = new QueueConfig(device.maxQueueSize());
        }
    }

    void setInterruptSink(InterruptSink s) {
        sink = s;
    }

    public VirtioDevice device() {
        return device;
    }

    public GuestMemory memory() {
        return memory;
    }

    public int queueCount() {
        return queues.length;
    }

    QueueConfig queue(int i) {
        return queues[i];
    }

    public int status() {
        return status;
    }

    public boolean isActive() {
        return active;
    }

    public int configGeneration() {
        return configGeneration;
    }

    public long negotiatedFeatures() {
        return negotiated;
    }

    public long ignoredNotifies() {
        return ignoredNotifies.get();
    }

    public String lastFault() {
        return lastFault;
    }

    /** The 32 feature bits in window {@code select} (0: bits 0-31, 1: bits 32-63, others 0). */
    public int deviceFeatureWindow(int select) {
        long f = offered();
        return switch (select) {
            case 0 -> (int) f;
            case 1 -> (int) (f >>> 32);
            default -> 0;
        };
    }

    public synchronized int driverFeatureWindow(int select) {
        return switch (select) {
            case 0 -> (int) driverFeatures;
            case 1 -> (int) (driverFeatures >>> 32);
            default -> 0;
        };
    }

    /** Driver features may only be written before FEATURES_OK (section 3.1.1 step 5). */
    public synchronized void writeDriverFeatureWindow(int select, int value) {
        if ((status & DeviceStatus.FEATURES_OK) != 0) {
            LOG.fine("driver features written after FEATURES_OK: ignored");
            return;
        }
        switch (select) {
            case 0 -> driverFeatures = (driverFeatures & 0xffffffff00000000L) | (value & 0xffffffffL);
            case 1 -> driverFeatures = (driverFeatures & 0xffffffffL) | ((long) value << 32);
            default -> LOG.fine("driver feature window " + select + " does not exist: ignored");
        }
    }

    /** Writes the device status register (sections 2.1, 2.4, 3.1.1). */
    public void writeStatus(int value) {
        value &= 0xff;
        if (value == 0) {
            reset();
            return;
        }
        List<DeviceQueue> toActivate = null;
        GuestFaultException refused = null;
        synchronized (this) {
            int old = status;
            // Section 2.1.2 / 3.1.1: the driver never clears bits except by writing 0; DEVICE_NEEDS_RESET
            // is the device's own bit.
            int next = old | (value & ~DeviceStatus.DEVICE_NEEDS_RESET);
            if ((next & DeviceStatus.FEATURES_OK) != 0 && (old & DeviceStatus.FEATURES_OK) == 0) {
                if (!featuresAcceptable(driverFeatures)) {
                    // Section 2.2.2: a device MUST NOT accept an unsupported subset; it leaves FEATURES_OK
                    // clear so the driver's re-read (3.1.1 step 6) sees the refusal.
                    next &= ~DeviceStatus.FEATURES_OK;
                } else {
                    negotiated = driverFeatures;
                }
            }
            status = next | (needsReset ? DeviceStatus.DEVICE_NEEDS_RESET : 0);
            if ((next & DeviceStatus.DRIVER_OK) != 0 && (old & DeviceStatus.DRIVER_OK) == 0 && !needsReset) {
                if ((next & DeviceStatus.FEATURES_OK) == 0) {
                    refused = new GuestFaultException("3.1.1", "DRIVER_OK set without FEATURES_OK");
                } else {
                    try {
                        toActivate = buildQueues();
                        active = true;
                    } catch (GuestFaultException e) {
                        refused = e;
                    }
                }
            }
        }
        if (refused != null) {
            fault(refused);
        } else if (toActivate != null) {
            // Outside the monitor: a device may wait for its I/O threads, which call back into us.
            activate(toActivate);
        }
    }

    /**
     * What the device offers, less VIRTIO_F_RING_PACKED when no packed ring factory is bound (section 2.2.2: a
     * device MUST NOT offer a feature it cannot support).
     */
    private long offered() {
        long f = device.offeredFeatures();
        return rings.supports(RingFormat.PACKED) ? f : f & ~VirtioFeatures.RING_PACKED;
    }

    private boolean featuresAcceptable(long features) {
        long offered = offered();
        if ((features & ~offered) != 0) {
            LOG.fine(() -> String.format("driver accepted features 0x%x not offered (0x%x)", features & ~offered,
                    offered));
            return false;
        }
        // Section 6: a device without the legacy interface requires VERSION_1.
        if ((features & VirtioFeatures.VERSION_1) == 0) {
            LOG.fine("driver did not accept VIRTIO_F_VERSION_1");
            return false;
        }
        return device.acceptsFeatures(features);
    }

    /** Builds the device views of the ready queues (validating them, section 2.7). Holds the monitor. */
    private List<DeviceQueue> buildQueues() {
        List<DeviceQueue> views = new ArrayList<>(queues.length);
        for (int i = 0; i < queues.length; i++) {
            QueueConfig q = queues[i];
            if (q.ready && (q.size < 1 || q.size > q.maxSize)) {
                // Sections 4.2.2.2 / 4.1.4.3.2: the driver sets a queue size no larger than the maximum
                // the device reported (QueueNumMax, queue_size).
                throw new GuestFaultException("4.2.2.2", "queue " + i + " size " + q.size
                        + " exceeds the device's maximum " + q.maxSize);
            }
            // After a reset the rings start at index 0 (section 2.7.13.1; packed: position 0, wrap counters 1,
            // section 2.8.1).
            int start = RingFormat.of(negotiated).initialIndex();
            views.add(q.ready ? rings.createDeviceQueue(memory, i, new QueueLayout(q.size, q.desc, q.driver, q.device),
                    negotiated, start, start) : null);
        }
        return Collections.unmodifiableList(views);
    }

    /** Hands the queues to the device (DRIVER_OK). */
    private void activate(List<DeviceQueue> list) {
        long features = negotiated;
        try {
            device.activate(new DeviceActivation(features, memory, list, VirtioFunction.this));
        } catch (GuestFaultException e) {
            active = false;
            fault(e);
        } catch (RuntimeException e) {
            active = false;
            LOG.log(Level.WARNING, "device activation failed", e);
            fault(new GuestFaultException("3.1.1", "device activation failed: " + e.getMessage(), e));
        }
    }

    /** Device reset (section 2.4): stops the device, waits for in-flight work, clears all state. */
    public void reset() {
        boolean wasActive;
        synchronized (this) {
            wasActive = active;
            active = false;
        }
        if (wasActive) {
            // Outside the monitor: the device waits for its I/O threads, which may be signalling us.
            device.reset();
        }
        synchronized (this) {
            status = 0;
            driverFeatures = 0;
            negotiated = 0;
            needsReset = false;
            lastFault = null;
            for (QueueConfig q : queues) {
                q.reset();
            }
        }
        InterruptSink s = sink;
        if (s instanceof Resettable r) {
            r.onReset();
        }
    }

    /** Transports whose interrupt state clears on reset. */
    interface Resettable {
        void onReset();
    }

    /** Called by transports for a queue notify (section 2.9 / 4.2.3.3 / 4.1.5.2). */
    public void notifyQueue(int index) {
        if (index < 0 || index >= queues.length) {
            // QEMU's nxvirtq case: a notify for a queue that does not exist is ignored.
            ignoredNotifies.incrementAndGet();
            LOG.fine(() -> "notify for non-existent queue " + index + " ignored");
            return;
        }
        if (!active || needsReset) {
            // Section 2.1.2: no buffer is consumed before DRIVER_OK (or while the device needs a reset).
            ignoredNotifies.incrementAndGet();
            return;
        }
        device.queueNotify(index);
    }

    // DeviceSignals, called from device threads.

    @Override
    public void usedBuffer(int queueIndex) {
        // Section 2.1.2: no used-buffer notification before DRIVER_OK.
        if (!active || (status & DeviceStatus.DRIVER_OK) == 0) {
            return;
        }
        InterruptSink s = sink;
        if (s != null) {
            s.queue(queueIndex);
        }
    }

    @Override
    public void configChanged() {
        synchronized (this) {
            configGeneration++;
        }
        if ((status & DeviceStatus.DRIVER_OK) == 0) {
            return;
        }
        InterruptSink s = sink;
        if (s != null) {
            s.config();
        }
    }

    @Override
    public void deviceError(GuestFaultException fault) {
        fault(fault);
    }

    private void fault(GuestFaultException e) {
        boolean notify;
        synchronized (this) {
            if (needsReset) {
                return;
            }
            needsReset = true;
            lastFault = e.getMessage();
            status |= DeviceStatus.DEVICE_NEEDS_RESET;
            notify = (status & DeviceStatus.DRIVER_OK) != 0;
        }
        LOG.warning("device needs reset: " + e.getMessage());
        // Section 2.1.2: with DRIVER_OK set, the device MUST send a configuration-change notification.
        InterruptSink s = sink;
        if (notify && s != null) {
            s.config();
        }
    }

    @Override
    public boolean needsReset() {
        return needsReset;
    }
}
