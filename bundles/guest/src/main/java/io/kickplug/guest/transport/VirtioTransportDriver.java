package io.kickplug.guest.transport;

import io.kickplug.api.virtio.QueueLayout;

/**
 * The driver's side of a virtio transport: the handful of register operations the generic initialization
 * (VIRTIO 1.2 section 3.1.1) and a device driver need. One implementation per transport (MMIO now, PCI
 * later); nothing above this interface knows register offsets.
 *
 * <p>Not thread-safe as a whole: queue selection is a shared window. Callers serialise configuration
 * (one thread during boot); {@link #notify(int)}, {@link #interruptStatus()} and
 * {@link #ackInterrupt(int)} are single register accesses and may be called from any thread.
 */
public interface VirtioTransportDriver {

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

    /** Pending interrupt causes: bit 0 used buffer, bit 1 configuration change. */
    int interruptStatus();

    /** Acknowledges the interrupt causes in {@code bits}. */
    void ackInterrupt(int bits);
}
