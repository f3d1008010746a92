package io.kickplug.vhost.server;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.vhost.testsupport.ExportedDisk;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.newsclub.net.unix.AFUNIXServerSocket;
import org.newsclub.net.unix.AFUNIXSocketAddress;

/** The listening socket: mode 0600, never over a live socket or another file, stale sockets replaced. */
class SocketPathsTest {

    @TempDir
    Path dir;

    private ExportedDisk export(Path socket) throws IOException {
        return new ExportedDisk("s", new MemoryBackend(1 << 16, false), 1, 1, socket);
    }

    @Test
    void theSocketHasMode0600AndIsRemovedOnStop() throws Exception {
        Path socket = dir.resolve("vhost.sock");
        try (ExportedDisk disk = export(socket)) {
            assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)));
        }
        assertFalse(Files.exists(socket), "stopping the export removes its socket");
    }

    @Test
    void aRegularFileIsNeverReplaced() throws Exception {
        Path file = dir.resolve("precious");
        Files.writeString(file, "data");
        IOException e = assertThrows(IOException.class, () -> export(file));
        assertTrue(e.getMessage().contains("is not a socket"), e.getMessage());
        assertEquals("data", Files.readString(file));
    }

    @Test
    void aSocketSomeoneListensOnIsRefused() throws Exception {
        Path socket = dir.resolve("busy.sock");
        try (AFUNIXServerSocket other = AFUNIXServerSocket.newInstance()) {
            other.bind(AFUNIXSocketAddress.of(socket.toFile()));
            IOException e = assertThrows(IOException.class, () -> export(socket));
            assertTrue(e.getMessage().contains("in use"), e.getMessage());
        }
    }

    @Test
    void aStaleSocketIsReplaced() throws Exception {
        Path socket = dir.resolve("stale.sock");
        AFUNIXServerSocket old = AFUNIXServerSocket.newInstance();
        old.setDeleteOnClose(false);
        old.bind(AFUNIXSocketAddress.of(socket.toFile()));
        old.close();
        assertTrue(Files.exists(socket), "a socket file left behind by a process that ended");
        try (ExportedDisk disk = export(socket)) {
            assertEquals(VhostUserServer.State.LISTENING, disk.server.status().state());
        }
    }

    @Test
    void aMissingDirectoryIsReported() {
        IOException e = assertThrows(IOException.class, () -> export(dir.resolve("no/such/dir/s.sock")));
        assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
    }
}
