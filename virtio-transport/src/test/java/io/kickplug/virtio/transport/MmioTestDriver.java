package io.kickplug.virtio.transport;

import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import static io.kickplug.api.transport.MmioRegisters.*;
import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtqueueFactory;

/** {@link TestDriver} over virtio-mmio version 2 (section 4.2.3). */
final class MmioTestDriver extends TestDriver {
    private final MmioTransport mmio;

    MmioTestDriver(VirtioDevice device, GuestMemory memory) {
        this(device, memory, new VirtqueueFactoryComponent());
    }

    MmioTestDriver(VirtioDevice device, GuestMemory memory, VirtqueueFactory rings) {
        this.mmio = new MmioTransport(device, memory, rings);
        connect(mmio);
    }

    private long r(int off) {
        return mmio.read(off, 4);
    }

    private void w(int off, long v) {
        mmio.write(off, 4, v);
    }

    @Override
    TransportBase transport() {
        return mmio;
    }

    @Override
    int readStatus() {
        return (int) r(STATUS);
    }

    @Override
    void writeStatus(int status) {
        w(STATUS, status);
    }

    @Override
    long deviceFeatures() {
        w(DEVICE_FEATURES_SEL, 0);
        long lo = r(DEVICE_FEATURES);
        w(DEVICE_FEATURES_SEL, 1);
        return lo | (r(DEVICE_FEATURES) << 32);
    }

    @Override
    void writeDriverFeatures(long f) {
        w(DRIVER_FEATURES_SEL, 0);
        w(DRIVER_FEATURES, f & 0xffffffffL);
        w(DRIVER_FEATURES_SEL, 1);
        w(DRIVER_FEATURES, f >>> 32);
    }

    @Override
    void setUpInterrupts() {
        // One interrupt line: nothing to map.
    }

    @Override
    int queueMaxSize(int index) {
        w(QUEUE_SEL, index);
        return (int) r(QUEUE_NUM_MAX);
    }

    @Override
    void setUpQueue(int index, QueueLayout l) {
        w(QUEUE_SEL, index);
        w(QUEUE_NUM, l.size());
        w(QUEUE_DESC_LOW, l.descTable() & 0xffffffffL);
        w(QUEUE_DESC_HIGH, l.descTable() >>> 32);
        w(QUEUE_DRIVER_LOW, l.availRing() & 0xffffffffL);
        w(QUEUE_DRIVER_HIGH, l.availRing() >>> 32);
        w(QUEUE_DEVICE_LOW, l.usedRing() & 0xffffffffL);
        w(QUEUE_DEVICE_HIGH, l.usedRing() >>> 32);
        w(QUEUE_READY, 1);
    }

    @Override
    boolean queueEnabled(int index) {
        w(QUEUE_SEL, index);
        return r(QUEUE_READY) == 1;
    }

    @Override
    void notifyQueue(int index) {
        w(QUEUE_NOTIFY, index);
    }

    @Override
    long readDeviceConfig(int offset, int width) {
        return mmio.read(CONFIG + offset, width);
    }

    @Override
    int configGeneration() {
        return (int) r(CONFIG_GENERATION);
    }

    @Override
    int takeInterruptCause() {
        int s = (int) r(INTERRUPT_STATUS);
        w(INTERRUPT_ACK, s);
        return s;
    }

    @Override
    void awaitQueueInterrupt(int index) throws InterruptedException {
        assertEquals(0, awaitVector(), "section 4.2.3.4: virtio-mmio has one interrupt line");
        assertEquals(INT_USED_BUFFER, takeInterruptCause() & INT_USED_BUFFER);
    }

    @Override
    void awaitConfigInterrupt() throws InterruptedException {
        assertEquals(0, awaitVector());
        assertEquals(INT_CONFIG_CHANGE, takeInterruptCause() & INT_CONFIG_CHANGE);
    }

    @Override
    public String toString() {
        return "mmio";
    }
}
