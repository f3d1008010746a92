package io.kickplug.api.virtio;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * A virtio device as its transport sees it. The transport owns the device status machine, feature
 * negotiation, queue configuration and interrupts (sections 2.1, 2.2, 3.1); the device owns its
 * configuration space and what it does with buffers once activated.
 *
 * <p>Threading: the transport calls these methods from the thread that performs the guest's register
 * access (a vCPU). {@link #queueNotify(int)} must only hand work to an I/O thread, never run it inline.
 */
@ConsumerType
public interface VirtioDevice {

    /** Device ID (section 5), for example {@link DeviceIds#BLOCK}. */
    int deviceId();

    /** Feature bits the device offers, device-independent ones included. */
    long offeredFeatures();

    /** Number of virtqueues. */
    int queueCount();

    /** Largest queue size the device supports (a power of two, at most 32768). */
    int maxQueueSize();

    /** Size of the device-specific configuration space in bytes. */
    int configSize();

    /**
     * Reads {@code width} (1, 2, 4 or 8) bytes of configuration space at {@code offset}, little-endian.
     * Out-of-range reads return 0.
     */
    long readConfig(int offset, int width);

    /** Writes configuration space; fields the driver may not write are ignored. */
    void writeConfig(int offset, int width, long value);

    /**
     * Whether the device accepts {@code driverFeatures} (already known to be a subset of the offered bits
     * and to include VERSION_1). A device refuses combinations it cannot honour (section 2.2.2).
     */
    default boolean acceptsFeatures(long driverFeatures) {
        return true;
    }

    /** Called once the driver set DRIVER_OK (section 3.1.1); the device may now use its queues. */
    void activate(DeviceActivation activation);

    /**
     * Stops all queue processing and waits for in-flight requests to complete (section 2.4). After it
     * returns the device touches neither guest memory nor the queues until activated again.
     */
    void reset();

    /**
     * Whether the device is known to touch neither guest memory nor its queues now: true before the first
     * activation and after a {@link #reset()} that saw every I/O thread leave the rings and every request in
     * flight complete; false while activated, and after a reset that gave up waiting (a request stuck in a
     * backend). A transport unmaps guest memory explicitly only while this is true; otherwise it leaves the
     * memory to the garbage collector.
     */
    default boolean quiescent() {
        return true;
    }

    /**
     * Whether the device waits on the queues' notification descriptors itself when an activation carries
     * {@link DeviceActivation#kicks()}; a transport that has descriptors reads them itself otherwise and calls
     * {@link #queueNotify(int)}.
     */
    default boolean waitsOnKickDescriptors() {
        return false;
    }

    /** The driver notified queue {@code queueIndex} (an available-buffer notification, section 2.9). */
    void queueNotify(int queueIndex);
}
