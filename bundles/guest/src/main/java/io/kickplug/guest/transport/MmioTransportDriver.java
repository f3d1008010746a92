package io.kickplug.guest.transport;

import static io.kickplug.api.transport.MmioRegisters.*;

import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.guest.driver.GuestDriverException;
import java.util.Objects;

/** {@link VirtioTransportDriver} over a virtio-mmio version 2 register window (VIRTIO 1.2 section 4.2.2). */
public final class MmioTransportDriver implements VirtioTransportDriver {
    private final RegisterWindow window;

    public MmioTransportDriver(RegisterWindow window) {
        this.window = Objects.requireNonNull(window, "window");
    }

    @Override
    public int probe() {
        // Section 4.2.3.1.1: ignore a device whose MagicValue or Version is wrong, or whose DeviceID is 0.
        int magic = read32(MAGIC_VALUE);
        if (magic != MAGIC) {
            throw new GuestDriverException(String.format(
                    "no virtio-mmio device: MagicValue is 0x%08x, expected 0x%08x (VIRTIO 1.2 section 4.2.3.1.1)",
                    magic, MAGIC));
        }
        int version = read32(VERSION);
        if (version != 2) {
            throw new GuestDriverException("virtio-mmio Version " + Integer.toUnsignedString(version)
                    + " is not supported, expected 2 (VIRTIO 1.2 section 4.2.3.1.1)");
        }
        return read32(DEVICE_ID);
    }

    @Override
    public int status() {
        return read32(STATUS);
    }

    @Override
    public void setStatus(int status) {
        write32(STATUS, status);
    }

    @Override
    public long deviceFeatures() {
        return FeatureWords.read(word -> write32(DEVICE_FEATURES_SEL, word), () -> read32(DEVICE_FEATURES));
    }

    @Override
    public void setDriverFeatures(long features) {
        FeatureWords.write(features, word -> write32(DRIVER_FEATURES_SEL, word),
                bits -> write32(DRIVER_FEATURES, (int) bits));
    }

    @Override
    public int queueMaxSize(int queue) {
        write32(QUEUE_SEL, queue);
        return read32(QUEUE_NUM_MAX);
    }

    @Override
    public boolean queueReady(int queue) {
        write32(QUEUE_SEL, queue);
        return read32(QUEUE_READY) != 0;
    }

    @Override
    public void setupQueue(int queue, QueueLayout layout) {
        write32(QUEUE_SEL, queue);
        write32(QUEUE_NUM, layout.size());
        write64(QUEUE_DESC_LOW, QUEUE_DESC_HIGH, layout.descTable());
        write64(QUEUE_DRIVER_LOW, QUEUE_DRIVER_HIGH, layout.availRing());
        write64(QUEUE_DEVICE_LOW, QUEUE_DEVICE_HIGH, layout.usedRing());
    }

    @Override
    public void enableQueue(int queue) {
        write32(QUEUE_SEL, queue);
        write32(QUEUE_READY, 1);
    }

    @Override
    public void notify(int queue) {
        write32(QUEUE_NOTIFY, queue);
    }

    @Override
    public int configGeneration() {
        return read32(CONFIG_GENERATION);
    }

    @Override
    public int readConfig(int offset, int width) {
        ConfigAccess.check(offset, width);
        long mask = width == 4 ? 0xFFFF_FFFFL : (1L << (8 * width)) - 1;
        return (int) (window.read(CONFIG + offset, width) & mask);
    }

    @Override
    public int interruptStatus() {
        return read32(INTERRUPT_STATUS);
    }

    @Override
    public void ackInterrupt(int bits) {
        write32(INTERRUPT_ACK, bits);
    }

    private int read32(int offset) {
        return (int) window.read(offset, 4);
    }

    private void write32(int offset, int value) {
        window.write(offset, 4, value & 0xFFFF_FFFFL);
    }

    private void write64(int low, int high, long value) {
        write32(low, (int) value);
        write32(high, (int) (value >>> 32));
    }
}
