package io.kickplug.virtio.transport;

import static io.kickplug.api.transport.MmioRegisters.*;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.DeviceIds;
import io.kickplug.api.virtio.DeviceStatus;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtqueueFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.logging.Logger;

/**
 * virtio-mmio version 2 (VIRTIO 1.2 section 4.2): decodes register accesses onto a {@link VirtioFunction}
 * and raises the guest's interrupt line (vector 0) whenever InterruptStatus gains a bit.
 */
public final class MmioTransport extends TransportBase implements RegisterWindow {
    private static final Logger LOG = Logger.getLogger(MmioTransport.class.getName());

    private final AtomicInteger interruptStatus = new AtomicInteger();

    private int deviceFeaturesSel;
    private int driverFeaturesSel;
    private int queueSel;
    private int shmSel;

    public MmioTransport(VirtioDevice device, GuestMemory memory, VirtqueueFactory rings) {
        super(TransportKind.MMIO, device, memory, rings);
        function.setInterruptSink(this);
    }

    @Override
    public RegisterWindow mmio() {
        return this;
    }

    // InterruptSink: set the InterruptStatus bit, then raise the line (section 4.2.3.4).

    @Override
    public void queue(int queue) {
        raise(INT_USED_BUFFER);
    }

    @Override
    public void config() {
        raise(INT_CONFIG_CHANGE);
    }

    private void raise(int bit) {
        interruptStatus.getAndUpdate(v -> v | bit);
        GuestInterrupts irq = guest.get();
        if (irq != null) {
            irq.raise(0);
        }
    }

    @Override
    public void onReset() {
        // Section 4.2.2.1: reset clears InterruptStatus.
        interruptStatus.set(0);
    }

    // RegisterWindow

    @Override
    public long size() {
        return WINDOW_SIZE;
    }

    @Override
    public long read(long offset, int width) {
        if (offset >= CONFIG) {
            long off = offset - CONFIG;
            VirtioDevice d = function.device();
            if (off + width > d.configSize()) {
                return 0;
            }
            return d.readConfig((int) off, width);
        }
        // Section 4.2.2.2: control registers are accessed 32 bits wide and aligned.
        if (width != 4 || (offset & 3) != 0) {
            LOG.fine(() -> "MMIO read of " + width + " bytes at 0x" + Long.toHexString(offset) + " ignored");
            return 0;
        }
        return switch ((int) offset) {
            case MAGIC_VALUE -> MAGIC & 0xffffffffL;
            case VERSION -> VERSION_2;
            case DEVICE_ID -> function.device().deviceId();
            case VENDOR_ID -> DeviceIds.KICKPLUG_VENDOR & 0xffffffffL;
            case DEVICE_FEATURES -> function.deviceFeatureWindow(deviceFeaturesSel) & 0xffffffffL;
            case QUEUE_NUM_MAX -> readQueueNumMax();
            case QUEUE_READY -> readQueueReady();
            case INTERRUPT_STATUS -> interruptStatus.get();
            case STATUS -> function.status();
            case CONFIG_GENERATION -> function.configGeneration() & 0xffffffffL;
            case SHM_LEN_LOW, SHM_LEN_HIGH, SHM_BASE_LOW, SHM_BASE_HIGH -> 0xffffffffL; // no shared memory
            case QUEUE_RESET -> 0;
            default -> 0;
        };
    }

    private synchronized long readQueueNumMax() {
        // Section 4.2.2: 0 when the selected queue is not available.
        // QueueSel is an unsigned 32-bit register: 0xffffffff must read as a missing queue, not index -1.
        return queueSel >= 0 && queueSel < function.queueCount() ? function.queue(queueSel).maxSize : 0;
    }

    private synchronized long readQueueReady() {
        return queueSel >= 0 && queueSel < function.queueCount() && function.queue(queueSel).ready ? 1 : 0;
    }

    @Override
    public void write(long offset, int width, long value) {
        if (offset >= CONFIG) {
            long off = offset - CONFIG;
            VirtioDevice d = function.device();
            if (off + width <= d.configSize()) {
                d.writeConfig((int) off, width, value);
            }
            return;
        }
        if (width != 4 || (offset & 3) != 0) {
            LOG.fine(() -> "MMIO write of " + width + " bytes at 0x" + Long.toHexString(offset) + " ignored");
            return;
        }
        int v = (int) value;
        switch ((int) offset) {
            case QUEUE_NOTIFY -> function.notifyQueue(v); // hot path: no lock (section 4.2.3.3)
            case INTERRUPT_ACK -> interruptStatus.getAndUpdate(s -> s & ~v);
            case STATUS -> function.writeStatus(v);
            default -> writeLocked((int) offset, v);
        }
    }

    private synchronized void writeLocked(int offset, int v) {
        switch (offset) {
            case DEVICE_FEATURES_SEL -> deviceFeaturesSel = v;
            case DRIVER_FEATURES_SEL -> driverFeaturesSel = v;
            case DRIVER_FEATURES -> function.writeDriverFeatureWindow(driverFeaturesSel, v);
            case QUEUE_SEL -> queueSel = v;
            case SHM_SEL -> shmSel = v;
            case QUEUE_NUM, QUEUE_READY, QUEUE_DESC_LOW, QUEUE_DESC_HIGH, QUEUE_DRIVER_LOW, QUEUE_DRIVER_HIGH,
                    QUEUE_DEVICE_LOW, QUEUE_DEVICE_HIGH -> writeQueue(offset, v);
            default -> LOG.fine(() -> "MMIO write to read-only or unknown register 0x" + Integer.toHexString(offset)
                    + " ignored");
        }
    }

    private void writeQueue(int offset, int v) {
        if (queueSel < 0 || queueSel >= function.queueCount()) {
            LOG.fine(() -> "queue register written for non-existent queue " + queueSel + ": ignored");
            return;
        }
        QueueConfig q = function.queue(queueSel);
        if (offset == QUEUE_READY) {
            if ((function.status() & DeviceStatus.DRIVER_OK) != 0) {
                LOG.fine("QueueReady changed after DRIVER_OK: ignored");
                return;
            }
            q.ready = (v & 1) != 0;
            return;
        }
        // Section 4.2.2.2 / 4.2.3.2: queue parameters are written while QueueReady is 0.
        if (q.ready) {
            LOG.fine(() -> "queue " + queueSel + " configured while ready: ignored");
            return;
        }
        long u = v & 0xffffffffL;
        switch (offset) {
            case QUEUE_NUM -> q.size = v;
            case QUEUE_DESC_LOW -> q.desc = (q.desc & 0xffffffff00000000L) | u;
            case QUEUE_DESC_HIGH -> q.desc = (q.desc & 0xffffffffL) | (u << 32);
            case QUEUE_DRIVER_LOW -> q.driver = (q.driver & 0xffffffff00000000L) | u;
            case QUEUE_DRIVER_HIGH -> q.driver = (q.driver & 0xffffffffL) | (u << 32);
            case QUEUE_DEVICE_LOW -> q.device = (q.device & 0xffffffff00000000L) | u;
            case QUEUE_DEVICE_HIGH -> q.device = (q.device & 0xffffffffL) | (u << 32);
            default -> {
            }
        }
    }

    @Override
    public String toString() {
        return "virtio-mmio(" + function.device().deviceId() + ", status 0x" + Integer.toHexString(function.status())
                + ")";
    }
}
