package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.Channels;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileAlreadyExistsException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The control socket's protocol and its handling of hostile clients, on a statement runner without OSGi. */
class ControlServerTest {

    private Path dir;
    private Path socket;
    private ControlServer server;
    private final CountDownLatch release = new CountDownLatch(1);
    private final CountDownLatch blocked = new CountDownLatch(1);
    private final AtomicInteger sessionsClosed = new AtomicInteger();

    /** "echo X" prints X; "json" prints a JSON object; "block" waits for the test; anything else fails. */
    private final ControlServer.Statements fake = () -> new ControlServer.Session() {
        @Override
        public String run(String statement) throws Exception {
            if (statement.startsWith("echo ")) {
                return statement.substring(5) + "\n";
            }
            if (statement.equals("lines")) {
                return "two\nlines\n";
            }
            if (statement.equals("silent")) {
                return "";
            }
            if (statement.equals("json")) {
                return "{\"disks\":[{\"name\":\"d0\",\"size_bytes\":1}]}\n";
            }
            if (statement.equals("block")) {
                blocked.countDown();
                release.await();
                return "released\n";
            }
            throw new IllegalArgumentException("Command not found: " + statement);
        }

        @Override
        public void close() {
            sessionsClosed.incrementAndGet();
        }
    };

    @BeforeEach
    void start() throws Exception {
        // Short: sun_path holds 107 bytes.
        dir = Files.createTempDirectory(Path.of("/tmp"), "kpc");
        socket = dir.resolve("ctl.sock");
        server = ControlServer.start(socket, fake, 128);
    }

    @AfterEach
    void stop() throws Exception {
        release.countDown();
        server.close();
        try (var s = Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    void eachStatementGetsOneJsonLine() throws Exception {
        try (ControlClient c = new ControlClient(socket)) {
            assertEquals("{\"ok\":true,\"result\":\"hello world\"}", c.ask("echo hello world"));
            assertEquals("{\"ok\":true,\"result\":\"two\\nlines\"}", c.ask("lines"));
            assertEquals("{\"ok\":true,\"result\":null}", c.ask("silent"));
            assertEquals("{\"ok\":true,\"result\":{\"disks\":[{\"name\":\"d0\",\"size_bytes\":1}]}}", c.ask("json"));
            assertEquals("{\"ok\":false,\"error\":\"Command not found: kp:nosuch\"}", c.ask("kp:nosuch"));
            assertEquals("{\"ok\":true,\"result\":\"still here\"}", c.ask("echo still here"));
        }
    }

    @Test
    void socketIsOwnerOnly() throws Exception {
        assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(socket)));
        try (var s = Files.list(dir)) {
            assertEquals(List.of(socket), s.toList(), "no staging directory is left behind");
        }
    }

    @Test
    void refusesAPathThatIsNotASocket() throws Exception {
        Path file = dir.resolve("file");
        Files.writeString(file, "precious");
        IOException e = assertThrows(IOException.class, () -> ControlServer.start(file, fake, 1));
        assertTrue(e.getMessage().contains("not a socket"), e.getMessage());
        assertEquals("precious", Files.readString(file));
    }

    @Test
    void refusesASocketSomebodyListensOn() {
        IOException e = assertThrows(FileAlreadyExistsException.class, () -> ControlServer.start(socket, fake, 1));
        assertTrue(e.getMessage().contains("listening"), e.getMessage());
    }

    @Test
    void replacesAStaleSocket() throws Exception {
        Path stale = dir.resolve("stale.sock");
        // A socket file whose listener is gone: bound, then closed (the file stays).
        try (ServerSocketChannel gone = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            gone.bind(UnixDomainSocketAddress.of(stale));
        }
        assertTrue(Files.exists(stale));
        try (ControlServer second = ControlServer.start(stale, fake, 4);
                SocketChannel c = SocketChannel.open(UnixDomainSocketAddress.of(stale))) {
            assertTrue(c.isConnected());
        }
        assertFalse(Files.exists(stale), "closing the server removes its socket");
    }

    @Test
    void garbageGetsAnErrorAndTheConnectionStaysUsable() throws Exception {
        try (ControlClient c = new ControlClient(socket)) {
            byte[] garbage = {0, (byte) 0xff, (byte) 0xfe, 0x7f, '{', '{', '"', 1, 2, 3, (byte) 0xc3};
            c.send(garbage);
            String answer = c.in.readLine();
            assertTrue(answer.startsWith("{\"ok\":false,\"error\":"), answer);
            assertTrue(Json.isValue(answer), answer);
            assertEquals("{\"ok\":true,\"result\":\"ok\"}", c.ask("echo ok"));
        }
    }

    @Test
    void aTenMegabyteLineIsDroppedWithAnErrorAndTheConnectionStaysUsable() throws Exception {
        try (ControlClient c = new ControlClient(socket)) {
            byte[] huge = new byte[10 << 20];
            java.util.Arrays.fill(huge, (byte) 'x');
            c.send(huge);
            String answer = c.in.readLine();
            assertTrue(answer.startsWith("{\"ok\":false,\"error\":\"line longer than"), answer);
            assertEquals("{\"ok\":true,\"result\":\"after\"}", c.ask("echo after"));
        }
    }

    @Test
    void aClientThatLeavesMidStatementDoesNotDisturbOthers() throws Exception {
        ControlClient leaving = new ControlClient(socket);
        leaving.send("block".getBytes(StandardCharsets.UTF_8));
        assertTrue(blocked.await(30, TimeUnit.SECONDS));
        leaving.close();
        try (ControlClient other = new ControlClient(socket)) {
            assertEquals("{\"ok\":true,\"result\":\"meanwhile\"}", other.ask("echo meanwhile"));
            release.countDown();
            // The leaver's session is closed once its statement ends and its answer cannot be written.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (sessionsClosed.get() < 1 && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(5_000_000L);
            }
            assertEquals(1, sessionsClosed.get());
            assertEquals("{\"ok\":true,\"result\":\"later\"}", other.ask("echo later"));
        }
    }

    @Test
    void aHundredClientsAtOnceAreAllAnswered() throws Exception {
        int n = 100;
        List<String> answers = ControlClient.askAtOnce(socket, n, id -> "echo client " + id, 60);
        for (int i = 0; i < n; i++) {
            assertEquals("{\"ok\":true,\"result\":\"client " + i + "\"}", answers.get(i));
        }
        try (ControlClient c = new ControlClient(socket)) {
            assertEquals("{\"ok\":true,\"result\":\"served\"}", c.ask("echo served"));
        }
    }

    @Test
    void clientsBeyondTheLimitGetAnErrorAndTheDaemonKeepsServing() throws Exception {
        Path small = dir.resolve("small.sock");
        try (ControlServer limited = ControlServer.start(small, fake, 2);
                SocketChannel a = SocketChannel.open(UnixDomainSocketAddress.of(small));
                SocketChannel b = SocketChannel.open(UnixDomainSocketAddress.of(small))) {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (limited.clients() < 2 && System.nanoTime() < deadline) {
                java.util.concurrent.locks.LockSupport.parkNanos(5_000_000L);
            }
            try (SocketChannel third = SocketChannel.open(UnixDomainSocketAddress.of(small))) {
                BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(third),
                        StandardCharsets.UTF_8));
                assertEquals("{\"ok\":false,\"error\":\"too many clients (2)\"}", in.readLine());
                assertEquals(null, in.readLine(), "then disconnected");
            }
            OutputStream out = Channels.newOutputStream(a);
            out.write("echo first\n".getBytes(StandardCharsets.UTF_8));
            BufferedReader in = new BufferedReader(new InputStreamReader(Channels.newInputStream(a),
                    StandardCharsets.UTF_8));
            assertEquals("{\"ok\":true,\"result\":\"first\"}", in.readLine());
        }
    }
}
