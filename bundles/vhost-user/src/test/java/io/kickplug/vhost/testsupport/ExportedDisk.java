package io.kickplug.vhost.testsupport;

import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.device.BlkDeviceSpec;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.vhost.server.PendingMarks;
import io.kickplug.vhost.server.VhostUserServer;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.iothread.EventLoopThread;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A disk exported over vhost-user in the test JVM, built the way the disk manager and {@code kp:vhost} do it:
 * a backend, I/O threads, a {@link VirtioBlkDevice} and a {@link VhostUserServer}.
 */
public final class ExportedDisk implements AutoCloseable {

    public final BlockBackend backend;
    public final VirtioBlkDevice device;
    public final VhostUserServer server;
    private final List<IoThread> threads = new ArrayList<>();

    public ExportedDisk(String name, BlockBackend backend, int numQueues, int ioThreads, Path socket)
            throws IOException {
        this(name, backend, numQueues, ioThreads, socket, new VirtqueueFactoryComponent());
    }

    /** With the given rings (both formats: {@code RingSelector.of(split, packed)}, as in the runtime). */
    public ExportedDisk(String name, BlockBackend backend, int numQueues, int ioThreads, Path socket,
            io.kickplug.api.virtio.VirtqueueFactory rings) throws IOException {
        this(name, backend, numQueues, ioThreads, socket, rings, new PendingMarks());
    }

    /**
     * With the store of pending dirty-log marks {@code marks}: an export made again with the same store (as the
     * vhost-user bundle does after a bundle update) gives its next session the marks the last one left.
     */
    public ExportedDisk(String name, BlockBackend backend, int numQueues, int ioThreads, Path socket,
            io.kickplug.api.virtio.VirtqueueFactory rings, PendingMarks marks) throws IOException {
        this.backend = backend;
        for (int i = 0; i < ioThreads; i++) {
            threads.add(new EventLoopThread("test-" + name + "-io" + i));
        }
        this.device = new VirtioBlkDevice(BlkDeviceSpec.of(name, backend, false, numQueues, 256,
                name.getBytes(StandardCharsets.US_ASCII), threads));
        this.server = new VhostUserServer(name, socket, device, rings, new GuestMemoryFactoryComponent(), marks);
    }

    /** A memory disk of {@code bytes} exported on {@code dir}/vhost.sock: the plain export most tests start from. */
    public static ExportedDisk memory(String name, long bytes, int numQueues, int ioThreads, Path dir)
            throws IOException {
        return new ExportedDisk(name, new MemoryBackend(bytes, false), numQueues, ioThreads, dir.resolve("vhost.sock"));
    }

    /** The disk's I/O thread {@code i} (a test may hold it busy to order its steps). */
    public IoThread ioThread(int i) {
        return threads.get(i);
    }

    /** A front-end connected to this disk's socket, its guest memory in {@code memoryFile}. */
    public FrontendClient connect(Path memoryFile) throws IOException {
        return new FrontendClient(server.socketPath(), memoryFile);
    }

    @Override
    public void close() throws Exception {
        server.close();
        threads.forEach(IoThread::close);
        backend.close();
    }
}
