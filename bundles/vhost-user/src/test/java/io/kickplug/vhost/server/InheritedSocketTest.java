package io.kickplug.vhost.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.vhost.protocol.VhostUser;
import io.kickplug.vhost.testsupport.FrontendClient;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.FileInputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.newsclub.net.unix.AFUNIXServerSocket;
import org.newsclub.net.unix.AFUNIXSocketAddress;
import org.newsclub.net.unix.FileDescriptorCast;

/**
 * An export on a listening Unix socket the process inherited (QEMU's {@code addr.type=fd,addr.str=N}; systemd's
 * socket activation, sd_listen_fds(3)): a front-end connects through it; stopping the export leaves the socket (and
 * its file) to its owner, still listening, so an export made again on the descriptor (after a bundle update) serves
 * the next front-end; a descriptor that is no listening Unix socket is refused.
 */
class InheritedSocketTest {

    @TempDir
    Path dir;

    private final List<BackendFactory> factories = List.of(new MemoryBackendFactory());
    private final DiskRegistry registry = InProcessHost.registry(() -> factories);
    private final VhostExports exports = new VhostExports(registry, new VirtqueueFactoryComponent(),
            new GuestMemoryFactoryComponent());

    @AfterEach
    void close() {
        exports.close();
        registry.close();
    }

    @Test
    void aFrontEndConnectsThroughTheInheritedSocketAndItOutlivesTheExport() throws Exception {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        registry.attach(DiskSpec.memory("d1", 1 << 20));
        Path path = dir.resolve("inherited.sock");
        try (AFUNIXServerSocket owner = AFUNIXServerSocket.newInstance()) {
            owner.bind(AFUNIXSocketAddress.of(path.toFile()));
            int fd = FileDescriptorCast.using(owner.getFileDescriptor()).as(Integer.class);
            VhostUserServer.Status status = exports.exportInherited("d0", fd, 2);
            assertEquals(Path.of("fd:" + fd), status.socket());
            assertEquals("descriptor " + fd + " serves the export of 'd0' already",
                    assertThrows(DiskException.class, () -> exports.exportInherited("d1", fd, 1)).getMessage());
            for (int round = 0; round < 2; round++) {
                try (FrontendClient client = new FrontendClient(path, dir.resolve("ram" + round))) {
                    long features = client.getU64(VhostUser.GET_FEATURES);
                    assertTrue((features & (1L << 32)) != 0, "VIRTIO_F_VERSION_1 offered: " + features);
                    assertEquals("connected", exports.exportStatus().get(0).state());
                }
                exports.stop("d0");
                assertTrue(Files.exists(path), "the socket file is its owner's");
                if (round == 0) {
                    // As after an update of this bundle: the export is made again on the same descriptor.
                    exports.exportInherited("d0", fd, 2);
                }
            }
        }
    }

    @Test
    void aDescriptorThatIsNoListeningUnixSocketIsRefused() throws Exception {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        Path file = Files.createFile(dir.resolve("plain"));
        try (FileInputStream in = new FileInputStream(file.toFile())) {
            int fd = FileDescriptorCast.using(in.getFD()).as(Integer.class);
            DiskException e = assertThrows(DiskException.class, () -> exports.exportInherited("d0", fd, 1));
            assertEquals("cannot export disk 'd0': descriptor " + fd + " is not a listening Unix socket",
                    e.getMessage());
        }
        assertEquals(List.of(), exports.list());
    }

    @Test
    void descriptorsByNumberOrBySystemdName() {
        assertEquals(7, InheritedSocket.resolve("7", Map.of(), 100));
        Map<String, String> env = Map.of("LISTEN_PID", "100", "LISTEN_FDS", "2", "LISTEN_FDNAMES", "vu0:vu1");
        assertEquals(3, InheritedSocket.resolve("vu0", env, 100));
        assertEquals(4, InheritedSocket.resolve("vu1", env, 100));
        assertThrows(IllegalArgumentException.class, () -> InheritedSocket.resolve("vu2", env, 100));
        // LISTEN_* are meant for the process whose pid LISTEN_PID names, not for a child that inherited them.
        assertThrows(IllegalArgumentException.class, () -> InheritedSocket.resolve("vu0", env, 101));
        assertThrows(IllegalArgumentException.class, () -> InheritedSocket.resolve("", env, 100));
        assertThrows(IllegalArgumentException.class, () -> InheritedSocket.resolve("-1", env, 100));
    }
}
