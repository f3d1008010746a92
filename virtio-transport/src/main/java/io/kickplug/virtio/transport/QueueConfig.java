package io.kickplug.virtio.transport;

/** What the driver wrote for one queue through the transport's queue registers. */
final class QueueConfig {
    final int maxSize;
    int size;
    boolean ready;
    long desc;
    long driver;
    long device;
    /** MSI-X vector for this queue (PCI), or NO_VECTOR; read by device threads when they signal. */
    volatile int msixVector = VirtioFunction.NO_VECTOR;

    QueueConfig(int maxSize) {
        this.maxSize = maxSize;
        this.size = maxSize;
    }

    void reset() {
        size = maxSize;
        ready = false;
        desc = 0;
        driver = 0;
        device = 0;
        msixVector = VirtioFunction.NO_VECTOR;
    }
}
