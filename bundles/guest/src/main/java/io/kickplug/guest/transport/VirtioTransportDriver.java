package io.kickplug.guest.transport;

import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.guest.driver.GuestDriverException;
import java.util.List;

/**
 * The driver's side of a virtio transport: the handful of register operations the generic initialization
 * (VIRTIO 1.2 section 3.1.1) and a device driver need. One implementation per transport
 * ({@link MmioTransportDriver}, {@link PciTransportDriver}); nothing above this interface knows register
 * offsets or interrupt vectors.
 *
 * <p>Not thread-safe as a whole: queue selection is a shared window. Callers serialise configuration
 * (one thread during boot); {@link #notify(int)}, {@link #interruptStatus()}, {@link #ackInterrupt(int)} and
 * {@link #takeInterruptCause(int)} are single register accesses (or none) and may be called from any thread.
 */
public interface VirtioTransportDriver {

    /**
     * The driver for the transport {@code port} sits behind, picked by {@link GuestPort#kind()}.
     *
     * @throws GuestDriverException for a transport the simulated guest cannot drive, or a port without the
     *     registers its kind promises
     */
    static VirtioTransportDriver forPort(GuestPort port) {
        switch (port.kind()) {
            case MMIO:
                if (port.mmio() == null) {
                    throw new GuestDriverException("virtio-mmio port has no register window");
                }
                return new MmioTransportDriver(port.mmio());
            case PCI:
                if (port.pci() == null) {
                    throw new GuestDriverException("virtio-pci port has no PCI function");
                }
                return new PciTransportDriver(port.pci());
            default:
                throw new GuestDriverException("the simulated guest drives virtio-mmio and virtio-pci only; this "
                        + "device sits behind " + port.kind().label());
        }
    }

    /**
     * Checks the transport's identification registers and returns the device ID (0 means no device).
     *
     * @throws io.kickplug.guest.driver.GuestDriverException when the registers do not identify a virtio
     *     device this driver can drive
     */
    int probe();

    /** Device status register (section 2.1). */
    int status();

    void setStatus(int status);

    /** All 64 device feature bits, read through the select window (section 2.2). */
    long deviceFeatures();

    /** Writes all 64 driver feature bits through the select window (section 2.2). */
    void setDriverFeatures(long features);

    /** Largest size of queue {@code queue}, or 0 when the queue does not exist. */
    int queueMaxSize(int queue);

    /** Whether queue {@code queue} is already enabled. */
    boolean queueReady(int queue);

    /** Tells the device the size and the guest addresses of queue {@code queue}'s rings. */
    void setupQueue(int queue, QueueLayout layout);

    /** Enables queue {@code queue}; its configuration is final from now on. */
    void enableQueue(int queue);

    /** Sends an available-buffer notification for {@code queue} (section 2.9): one register write. */
    void notify(int queue);

    /** Configuration generation counter (section 2.5). */
    int configGeneration();

    /** Reads {@code width} (1, 2 or 4) bytes of device configuration space at {@code offset}. */
    int readConfig(int offset, int width);

    /**
     * Linux's {@code find_vqs}: sets up queue {@code q} with {@code layouts.get(q)} for every q, maps the queues'
     * and the configuration change's interrupts, and enables the queues. The queues must exist (checked with
     * {@link #queueMaxSize}) and not be enabled yet.
     *
     * <p>The default is one interrupt line (virtio-mmio's {@code vm_find_vqs}): each queue is set up and
     * enabled in turn.
     *
     * @return how interrupts arrive from now on
     * @throws GuestDriverException when the device refuses the queues
     */
    default InterruptRouting findQueues(List<QueueLayout> layouts) {
        for (int q = 0; q < layouts.size(); q++) {
            setupQueue(q, layouts.get(q));
            enableQueue(q);
        }
        return InterruptRouting.line(layouts.size());
    }

    /**
     * The interrupt routing {@link #findQueues} chose, or {@code null} before it ran (or after a reset).
     */
    default InterruptRouting routing() {
        return null;
    }

    /**
     * Pending interrupt causes ({@link InterruptRouting#USED_BUFFER}, {@link InterruptRouting#CONFIG_CHANGE}):
     * virtio-mmio's InterruptStatus, virtio-pci's ISR status (which the read clears).
     */
    int interruptStatus();

    /** Acknowledges the interrupt causes in {@code bits} (virtio-mmio InterruptACK; nothing on virtio-pci). */
    void ackInterrupt(int bits);

    /**
     * The first step of the interrupt handler: what the interrupts taken since the last call mean. With one
     * line the transport's status is read and acknowledged (virtio-mmio {@code vm_interrupt}, virtio-pci
     * {@code vp_interrupt}); with MSI-X the vectors already said it ({@code raised}, the OR of
     * {@link InterruptRouting#cause} of each vector taken) and nothing is read ({@code vp_vring_interrupt},
     * {@code vp_config_changed}).
     */
    default int takeInterruptCause(int raised) {
        InterruptRouting r = routing();
        if (r != null && !r.readsStatus()) {
            return raised;
        }
        int status = interruptStatus();
        if (status != 0) {
            ackInterrupt(status);
        }
        return status;
    }
}
