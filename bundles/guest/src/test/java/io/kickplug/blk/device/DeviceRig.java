package io.kickplug.blk.device;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.transport.MmioTransport;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * A device under test behind virtio-mmio, as a JUnit extension ({@code @RegisterExtension final DeviceRig rig =
 * new DeviceRig();}): the test adds its I/O threads to {@link #threads}, builds the {@link #device} and connects a
 * guest; after each test the transport is closed (a device reset that waits for the requests in flight), then the
 * device (its worker pool), the I/O threads and the {@link #backend}, if the test set one.
 */
final class DeviceRig implements AfterEachCallback {

    final List<IoThread> threads = new ArrayList<>();
    VirtioBlkDevice device;
    MmioTransport transport;
    /** A backend the test opened, closed last (a device never closes its backend); may stay null. */
    AutoCloseable backend;

    /** Builds the device; its spec names {@link #threads}. */
    VirtioBlkDevice device(BlkDeviceSpec spec) {
        device = new VirtioBlkDevice(spec);
        return device;
    }

    /**
     * Puts the device behind virtio-mmio over {@code memoryBytes} of guest memory and initialises it from a guest
     * that accepts {@code features} (section 3.1.1) with {@code queues} queues of {@code queueSize}.
     */
    RawRingGuest guest(long memoryBytes, long features, int queues, int queueSize) {
        transport = new MmioTransport(device, OffHeapGuestMemory.allocate(memoryBytes), new VirtqueueFactoryComponent());
        return new RawRingGuest(transport.port()).init(features, queues, queueSize);
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        if (transport != null) {
            transport.close();
        }
        if (device != null) {
            device.close();
        }
        threads.forEach(IoThread::close);
        if (backend != null) {
            backend.close();
        }
    }
}
