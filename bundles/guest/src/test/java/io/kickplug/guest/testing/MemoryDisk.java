package io.kickplug.guest.testing;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.device.BlkDeviceSpec;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.iothread.EventLoopThread;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * The engine tests' disk: a virtio-blk device over a memory backend, served by one I/O thread, behind a transport
 * of the test's kind over {@link #MEMORY_BYTES} of guest memory. The I/O thread and the transport are closed by the
 * test's {@link Closer}, the transport first (a device reset that waits for the requests in flight).
 */
public record MemoryDisk(MemoryBackend backend, VirtioBlkDevice device, GuestMemory memory,
        TransportInstance transport) {

    public static final int MEMORY_BYTES = 16 << 20;

    /** Disk {@code name} (its serial too) of {@code diskBytes}, with {@code queues} queues of {@code queueSize}. */
    public static MemoryDisk open(Closer opened, TransportKind kind, String name, long diskBytes, int queues,
            int queueSize) {
        IoThread io = opened.add(new EventLoopThread(name + "-io"));
        MemoryBackend backend = new MemoryBackend(diskBytes, false);
        VirtioBlkDevice device = new VirtioBlkDevice(BlkDeviceSpec.of(name, backend, false, queues, queueSize,
                name.getBytes(StandardCharsets.US_ASCII), List.of(io)));
        GuestMemory memory = OffHeapGuestMemory.allocate(MEMORY_BYTES);
        return new MemoryDisk(backend, device, memory, transport(opened, kind, device, memory));
    }

    /** {@code device} behind a new transport of {@code kind} over {@code memory}, closed by {@code opened}. */
    public static TransportInstance transport(Closer opened, TransportKind kind, VirtioDevice device,
            GuestMemory memory) {
        return opened.add(new TransportFactoryComponent(new VirtqueueFactoryComponent()).create(kind, device, memory));
    }
}
