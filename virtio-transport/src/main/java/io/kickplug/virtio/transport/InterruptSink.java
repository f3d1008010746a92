package io.kickplug.virtio.transport;

/** How a transport turns device notifications into guest interrupts. */
interface InterruptSink {
    /** A used-buffer notification for {@code queue}. */
    void queue(int queue);

    /** A configuration-change notification. */
    void config();
}
