package io.kickplug.virtio.testkit;

import io.kickplug.api.virtio.ChainWriter;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.iothread.EventLoopThread;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A minimal device for transport tests: on a notify its I/O thread drains the queue and completes each
 * chain by writing 0x5a into its last writable byte. Runs the drain loop of {@link DeviceQueue}.
 */
public final class EchoDevice implements VirtioDevice, AutoCloseable {
    private final int queues;
    private final long features;
    private final byte[] config = new byte[8];
    private final EventLoopThread loop = new EventLoopThread("echo-io");
    private volatile DeviceActivation activation;
    public final AtomicLong completed = new AtomicLong();
    public final AtomicLong notifies = new AtomicLong();
    /** Guest faults the drain loop caught and reported through {@code deviceError}. */
    public final AtomicLong faults = new AtomicLong();
    public volatile int resets;

    public EchoDevice(int queues, long extraFeatures) {
        this.queues = queues;
        this.features = VirtioFeatures.VERSION_1 | extraFeatures;
        config[0] = 0x11;
        config[7] = 0x77;
    }

    @Override
    public int deviceId() {
        return 42;
    }

    @Override
    public long offeredFeatures() {
        return features;
    }

    @Override
    public int queueCount() {
        return queues;
    }

    @Override
    public int maxQueueSize() {
        return 64;
    }

    @Override
    public int configSize() {
        return config.length;
    }

    @Override
    public long readConfig(int offset, int width) {
        long v = 0;
        for (int i = width - 1; i >= 0; i--) {
            v = (v << 8) | (config[offset + i] & 0xff);
        }
        return v;
    }

    @Override
    public void writeConfig(int offset, int width, long value) {
        for (int i = 0; i < width; i++) {
            config[offset + i] = (byte) (value >>> (8 * i));
        }
    }

    @Override
    public void activate(DeviceActivation a) {
        this.activation = a;
    }

    /**
     * Waits until every task queued on the device's I/O thread so far has run (and so proves that the
     * thread still runs tasks).
     *
     * @throws IllegalStateException if the thread does not get there within 10 seconds
     */
    public void awaitIdle() {
        CompletableFuture<Void> barrier = new CompletableFuture<>();
        loop.execute(() -> barrier.complete(null));
        try {
            barrier.get(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new IllegalStateException("I/O thread of the echo device did not run a task", e);
        }
    }

    @Override
    public void reset() {
        awaitIdle();
        activation = null;
        resets++;
    }

    @Override
    public void queueNotify(int index) {
        notifies.incrementAndGet();
        loop.execute(() -> drain(index));
    }

    private void drain(int index) {
        DeviceActivation a = activation;
        if (a == null) {
            return;
        }
        DeviceQueue q = a.queues().get(index);
        if (q == null) {
            return;
        }
        try {
            do {
                q.disableNotification();
                DescriptorChain c;
                while ((c = q.pop()) != null) {
                    ChainWriter w = c.writer();
                    int written = 0;
                    if (w.remaining() > 0) {
                        w.skip(w.remaining() - 1);
                        w.writeU8(0x5a);
                        written = (int) c.writableBytes();
                    }
                    q.pushUsed(c.head(), written);
                    completed.incrementAndGet();
                }
            } while (q.enableNotification());
            if (q.needsNotification()) {
                a.signals().usedBuffer(index);
            }
        } catch (GuestFaultException e) {
            faults.incrementAndGet();
            a.signals().deviceError(e);
        }
    }

    public void close() {
        loop.close();
    }
}
