package io.kickplug.vhost.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.transport.ExportStatus;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link VhostExports#exportStatus}: what {@code kp:disks} shows of an export (socket, connection state); an export
 * named again.
 */
class VhostExportsTest {

    @TempDir
    Path dir;

    private final List<BackendFactory> factories = List.of(new MemoryBackendFactory());
    private final DiskRegistry registry = InProcessHost.registry(() -> factories);
    private final DiskManager disks = registry;
    private final VhostExports exports = new VhostExports(disks, new VirtqueueFactoryComponent(),
            new GuestMemoryFactoryComponent());

    @AfterEach
    void close() {
        exports.close();
        registry.close();
    }

    @Test
    void reportsTheSocketAndWhetherAFrontEndIsConnected() throws Exception {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        Path socket = dir.resolve("d0.sock");
        exports.export("d0", socket, 1);
        ExportStatus status = exports::exportStatus;
        assertEquals(List.of(new ExportStatus.Export("d0", "vhost-user", socket.toAbsolutePath().toString(),
                "listening")), status.exports());
        try (FrontendClient client = new FrontendClient(socket, dir.resolve("ram"))) {
            client.getU64(io.kickplug.vhost.protocol.VhostUser.GET_FEATURES); // the session is running
            assertEquals("connected", status.exports().get(0).state());
        }
        // After the disconnect the export listens again (the session ends asynchronously).
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (!"listening".equals(status.exports().get(0).state()) && System.nanoTime() < deadline) {
            Thread.onSpinWait();
        }
        assertEquals("listening", status.exports().get(0).state());
        exports.stop("d0");
        assertTrue(status.exports().isEmpty());
    }

    @Test
    void theSameExportNamedAgainIsAnsweredWithItAnotherIsRefused() {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        Path socket = dir.resolve("d0.sock");
        VhostUserServer.Status first = exports.export("d0", socket, 2);
        // A start-up script's kp:vhost after the export came back from its configuration (--state DIR).
        VhostUserServer.Status again = exports.export("d0", dir.resolve(".").resolve("d0.sock"), 2);
        assertEquals(first.socket(), again.socket());
        assertEquals(1, exports.list().size());
        DiskException other = assertThrows(DiskException.class, () -> exports.export("d0", dir.resolve("e.sock"), 2));
        assertEquals("disk 'd0' is already exported on " + socket.toAbsolutePath() + " with 2 queues",
                other.getMessage());
        assertThrows(DiskException.class, () -> exports.export("d0", socket, 1), "another queue count");
    }
}
