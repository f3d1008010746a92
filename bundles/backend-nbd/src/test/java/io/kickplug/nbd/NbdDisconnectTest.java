package io.kickplug.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.virtio.testkit.Await;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * proto.md, NBD_CMD_DISC: a clean close of the backend tells the server on every connection before closing it.
 * qemu-nbd (started by the test) traces each request type it decodes ({@code nbd_co_receive_request_decode_type}).
 */
class NbdDisconnectTest {

    private static final Pattern DISC = Pattern.compile("type = 2 \\(disconnect\\)");
    private Path dir;
    private NbdServer server;

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("kp-nbd-disc");
        Path image = dir.resolve("disk.raw");
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(4 << 20);
        }
        server = NbdServer.qemuNbdTraced(dir, image, "disk", "nbd_co_receive_request_decode_type");
    }

    @AfterEach
    void tearDown() throws IOException {
        if (server != null) {
            server.close();
        }
        try (var files = Files.walk(dir)) {
            files.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
        }
    }

    private static int count(String log, Pattern p) {
        int n = 0;
        for (Matcher m = p.matcher(log); m.find();) {
            n++;
        }
        return n;
    }

    @Test
    void aCleanCloseSendsDisconnectOnEveryConnection() throws Exception {
        NbdBackend backend = NbdBackend.open(NbdUri.parse(server.uri("disk")), false,
                new NbdBackend.Options(2, 10_000, 10_000, 5_000));
        Await.await(() -> backend.liveConnections() == 2, "two connections (qemu-nbd -e 8 offers multi-conn)");
        TestIo io = TestIo.write(0, new byte[4096]);
        backend.submit(io);
        backend.unplug();
        assertTrue(io.await(10), "the write completed");
        assertEquals(null, io.error);
        assertEquals(0, count(server.log(), DISC), "no disconnect while the backend is open");
        backend.close();
        Await.await(() -> count(logQuietly(), DISC) == 2, Duration.ofSeconds(10),
                () -> "NBD_CMD_DISC on both connections in qemu-nbd's trace: " + logQuietly());
        assertTrue(logQuietly().contains("type = 1 (write)"), "the write was traced as well");
    }

    private String logQuietly() {
        try {
            return server.log();
        } catch (IOException e) {
            return e.toString();
        }
    }
}
