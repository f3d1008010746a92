package io.kickplug.virtio.transport;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.virtio.QueueLayout;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A test-side virtio driver that performs each step of section 3.1.1 register by register through one
 * transport, so the same test can run against virtio-mmio and virtio-pci. It records every vector the
 * transport raises.
 */
abstract class TestDriver implements AutoCloseable {
    private final BlockingQueue<Integer> raised = new LinkedBlockingQueue<>();

    protected void connect(TransportInstance t) {
        t.port().connectInterrupts(raised::add);
    }

    abstract TransportBase transport();

    /** The transport's virtio function (both transports keep it in {@link TransportBase}). */
    final VirtioFunction function() {
        return transport().function();
    }

    abstract int readStatus();

    abstract void writeStatus(int status);

    abstract long deviceFeatures();

    abstract void writeDriverFeatures(long features);

    /** After FEATURES_OK, before the queues: where a driver maps its interrupts (the PCI config vector). */
    abstract void setUpInterrupts();

    /** The largest size of queue {@code index}, 0 when it does not exist; read before the queue is set up. */
    abstract int queueMaxSize(int index);

    /** Selects the queue, writes its size and ring addresses (and its MSI-X vector), then enables it. */
    abstract void setUpQueue(int index, QueueLayout layout);

    abstract boolean queueEnabled(int index);

    /** An available-buffer notification for queue {@code index} (section 2.9), as a guest sends it. */
    abstract void notifyQueue(int index);

    abstract long readDeviceConfig(int offset, int width);

    abstract int configGeneration();

    /** Reads the interrupt cause as a driver's INTx handler does (MMIO InterruptStatus + ack, PCI ISR). */
    abstract int takeInterruptCause();

    /** Waits for the used-buffer interrupt of queue {@code index} and checks its cause. */
    abstract void awaitQueueInterrupt(int index) throws InterruptedException;

    /** Waits for the configuration-change interrupt and checks its cause. */
    abstract void awaitConfigInterrupt() throws InterruptedException;

    protected int awaitVector() throws InterruptedException {
        Integer v = raised.poll(10, TimeUnit.SECONDS);
        assertNotNull(v, "no interrupt raised within 10 s");
        return v;
    }

    /** Vectors raised and not yet awaited. */
    int unclaimedInterrupts() {
        return raised.size();
    }

    @Override
    public void close() {
        transport().close();
    }
}
