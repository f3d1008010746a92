package io.kickplug.export.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskSpec;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import java.io.FileInputStream;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.newsclub.net.unix.AFUNIXServerSocketChannel;
import org.newsclub.net.unix.AFUNIXSocketAddress;
import org.newsclub.net.unix.FileDescriptorCast;

/**
 * A listening socket the process inherited, by descriptor number (QEMU's {@code addr.type=fd}): junixsocket wraps a
 * duplicate of an AF_UNIX one and the server listens on it; a descriptor that is no listening Unix socket is refused
 * with a message. (Closing the duplicate shuts the socket down: a stopped server cannot listen on it again.)
 */
class InheritedSocketTest {

    @Test
    void aServerListensOnAnInheritedUnixSocket() throws Exception {
        Path dir = Files.createTempDirectory("kp-nbd-fd-");
        Path path = dir.resolve("inherited.sock");
        DiskRegistry disks = InProcessHost.registry();
        try (AFUNIXServerSocketChannel inherited = AFUNIXServerSocketChannel.open()) {
            inherited.bind(AFUNIXSocketAddress.of(path.toFile()));
            int fd = FileDescriptorCast.using(inherited.getFileDescriptor()).as(Integer.class);
            disks.attach(DiskSpec.memory("d0", 1 << 20));
            NbdService service = new NbdService(disks, NbdService.Store.NONE);
            {
                service.start(Listener.inherited(fd), 4);
                service.export("d0", "d0", false);
                try (RawClient c = new RawClient(path).hello()) {
                    int flags = c.go("d0", true);
                    assertTrue((flags & Nbd.FLAG_READ_ONLY) != 0);
                    c.request(0, Nbd.CMD_READ, 5, 0, 512, null);
                    assertEquals(0, c.reply(0).errno());
                }
                service.stop();
            }
            assertEquals("fd:" + fd, Listener.inherited(fd).describe(-1));
            service.close();
        } finally {
            disks.close();
            Files.deleteIfExists(path);
            Files.deleteIfExists(dir);
        }
    }

    @Test
    void aDescriptorThatIsNoListeningUnixSocketIsRefused() throws Exception {
        Path file = Files.createTempFile("kp-nbd-fd-", ".txt");
        try (FileInputStream in = new FileInputStream(file.toFile())) {
            int fd = FileDescriptorCast.using(in.getFD()).as(Integer.class);
            IOException e = assertThrows(IOException.class, () -> Listener.inherited(fd).open());
            assertTrue(e.getMessage().contains("not a listening Unix socket"), e.getMessage());
        } finally {
            Files.deleteIfExists(file);
        }
    }
}
