package io.kickplug.vhost.ds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.control.BlockExports;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.vhost.server.VhostExports;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The vhost-user exports as the QMP bundle makes them (BlockExports): made, listed, refused, deleted. */
class VhostBlockExportsTest {

    @TempDir
    Path dir;

    private final List<BackendFactory> factories = List.of(new MemoryBackendFactory());
    private final DiskRegistry registry = InProcessHost.registry(() -> factories);
    private final VhostExports exports = new VhostExports(registry, new VirtqueueFactoryComponent(),
            new GuestMemoryFactoryComponent());
    private final BlockExports blockExports = new VhostBlockExports(new VhostCommands(exports), registry);

    @AfterEach
    void close() {
        exports.close();
        registry.close();
    }

    @Test
    void makesListsAndDeletesAnExport() {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        Path socket = dir.resolve("d0.sock");
        BlockExports.Export e = blockExports.add("d0", true, Map.of("socket", socket.toString(), "queues", "2"));
        assertEquals(new BlockExports.Export("d0", "d0", true, socket.toString(), "listening"), e);
        assertTrue(Files.exists(socket));
        assertEquals(List.of(e), blockExports.list());
        blockExports.delete("d0");
        assertEquals(List.of(), blockExports.list());
        assertTrue(!Files.exists(socket), "the socket is removed");
        assertThrows(DiskException.class, () -> blockExports.delete("d0"));
    }

    /** The device's read-only bit is the disk's (VIRTIO_BLK_F_RO, VIRTIO 1.2 section 5.2.3). */
    @Test
    void writableMustMatchTheDisk() {
        registry.attach(DiskSpec.memory("rw", 1 << 20));
        registry.attach(DiskSpec.memory("ro", 1 << 20).withBackend(new BackendSpec("memory", null, 1 << 20, true)));
        Map<String, String> opts = Map.of("socket", dir.resolve("x.sock").toString());
        assertTrue(assertThrows(DiskException.class, () -> blockExports.add("rw", false, opts)).getMessage()
                .contains("writable"));
        assertTrue(assertThrows(DiskException.class, () -> blockExports.add("ro", true, opts)).getMessage()
                .contains("read-only"));
        assertThrows(IllegalArgumentException.class, () -> blockExports.add("rw", true, Map.of("sock", "/x")));
        assertThrows(IllegalArgumentException.class, () -> blockExports.add("rw", true,
                Map.of("socket", "/x", "queues", "0")));
        assertEquals(List.of(), blockExports.list());
    }
}
