package io.kickplug.guest.testing;

import static io.kickplug.virtio.pci.PciRegisters.*;

import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.PciFunction;
import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.virtio.transport.PciTransport;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The guest's view of a real {@link PciTransport}, with switches that make the device behave as a more limited
 * (or broken) one would, and a record of every vector raised. Only register values change; the device behind
 * is untouched. Knows Kickplug's layout (common configuration at offset 0 of BAR 4), as a test may.
 */
public final class TamperedPciPort extends ForwardingGuestPort implements PciFunction {

    private final PciTransport pci;
    private final int msixCap;
    private final RegisterWindow config;
    private final RegisterWindow virtioBar;

    /** Every vector the device raised, in order. */
    public final List<Integer> vectors = new CopyOnWriteArrayList<>();
    /** Reads of the ISR status. */
    public final AtomicInteger isrReads = new AtomicInteger();
    /** MSI-X table size reported in Message Control (0: the real one). */
    public volatile int msixTableSize;
    /** queue_msix_vector writes of this vector or above are answered with NO_VECTOR (-1: none). */
    public volatile int refuseQueueVectorsFrom = -1;
    /** config_msix_vector writes are answered with NO_VECTOR. */
    public volatile boolean refuseConfigVector;
    /** queue_notify_off reads return this (-1: the real one). */
    public volatile int notifyOff = -1;
    /** The vendor ID reads as this (-1: the real one). */
    public volatile int vendor = -1;

    public TamperedPciPort(PciTransport pci) {
        super(pci);
        this.pci = pci;
        RegisterWindow cfg = pci.configSpace();
        int found = 0;
        for (int at = (int) cfg.read(CAPABILITIES_POINTER, 1); at != 0; at = (int) cfg.read(at + CAP_NEXT, 1)) {
            if (cfg.read(at, 1) == CAP_ID_MSIX) {
                found = at;
            }
        }
        this.msixCap = found;
        this.config = new ConfigWindow(cfg);
        this.virtioBar = new VirtioBar(pci.bar(VIRTIO_BAR));
    }

    @Override
    public PciFunction pci() {
        return this;
    }

    @Override
    public void connectInterrupts(GuestInterrupts interrupts) {
        pci.connectInterrupts(interrupts == null ? null : vector -> {
            vectors.add(vector);
            interrupts.raise(vector);
        });
    }

    @Override
    public RegisterWindow configSpace() {
        return config;
    }

    @Override
    public RegisterWindow bar(int index) {
        return index == VIRTIO_BAR ? virtioBar : pci.bar(index);
    }

    /** Whether MSI-X Enable is set in the real Message Control. */
    public boolean msixEnabled() {
        return (pci.configSpace().read(msixCap + MSIX_MESSAGE_CONTROL, 2) & MSIX_CONTROL_ENABLE) != 0;
    }

    private final class ConfigWindow extends ForwardingWindow {

        ConfigWindow(RegisterWindow real) {
            super(real);
        }

        @Override
        public long read(long offset, int width) {
            long value = real.read(offset, width);
            if (offset == VENDOR_ID && vendor >= 0) {
                return width == 2 ? vendor : (value & ~0xffffL) | vendor;
            }
            if (offset == msixCap + MSIX_MESSAGE_CONTROL && width == 2 && msixTableSize > 0) {
                return (value & ~MSIX_CONTROL_TABLE_SIZE_MASK) | (msixTableSize - 1);
            }
            return value;
        }
    }

    private final class VirtioBar extends ForwardingWindow {

        VirtioBar(RegisterWindow real) {
            super(real);
        }

        @Override
        public long read(long offset, int width) {
            if (offset == ISR_CFG_OFFSET) {
                isrReads.incrementAndGet();
            }
            if (offset == COMMON_CFG_OFFSET + COMMON_QUEUE_NOTIFY_OFF && notifyOff >= 0) {
                return notifyOff;
            }
            return real.read(offset, width);
        }

        @Override
        public void write(long offset, int width, long value) {
            int from = refuseQueueVectorsFrom;
            if (offset == COMMON_CFG_OFFSET + COMMON_QUEUE_MSIX_VECTOR && from >= 0 && value != NO_VECTOR
                    && value >= from) {
                value = NO_VECTOR;
            }
            if (offset == COMMON_CFG_OFFSET + COMMON_CONFIG_MSIX_VECTOR && refuseConfigVector) {
                value = NO_VECTOR;
            }
            real.write(offset, width, value);
        }
    }
}
