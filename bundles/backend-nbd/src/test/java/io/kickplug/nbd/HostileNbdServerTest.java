package io.kickplug.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.nbd.HostileNbdServer.Mode;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * A server that breaks the protocol gets a clear error for the request it broke, within a bounded time, never a
 * hang and never a completion with wrong data; a well-behaved disk next to it keeps working.
 */
class HostileNbdServerTest {

    private static final NbdBackend.Options FAST = new NbdBackend.Options(1, 2_000, 500, 2_000);

    private Path dir;
    private HostileNbdServer hostile;
    private HostileNbdServer good;
    private NbdBackend backend;
    private NbdBackend other;

    @BeforeEach
    void setUp() throws IOException {
        dir = Files.createTempDirectory("kp-nbd-hostile");
        good = new HostileNbdServer(dir, Mode.GOOD);
        other = NbdBackend.open(NbdUri.parse(good.uri()), false, FAST);
    }

    @AfterEach
    void tearDown() throws IOException {
        if (backend != null) {
            backend.close();
        }
        other.close();
        if (hostile != null) {
            hostile.close();
        }
        good.close();
        Files.deleteIfExists(dir);
    }

    /** A read on the well-behaved disk: its data is the server's. */
    private void otherDiskStillWorks() throws InterruptedException {
        TestIo read = TestIo.read(4096, 4096);
        other.submit(read);
        other.unplug();
        assertTrue(read.await(10));
        assertNull(read.error);
        byte[] sevens = new byte[4096];
        Arrays.fill(sevens, (byte) 7);
        assertArrayEquals(sevens, read.data());
    }

    @ParameterizedTest
    @EnumSource(value = Mode.class, names = {"BAD_MAGIC", "WRONG_COOKIE", "OVERSIZE", "OUT_OF_RANGE", "TRUNCATED",
        "SILENT"})
    void aBrokenReplyFailsItsRequestClearlyAndInBoundedTime(Mode mode) throws Exception {
        hostile = new HostileNbdServer(dir, mode);
        backend = NbdBackend.open(NbdUri.parse(hostile.uri()), false, FAST);
        TestIo read = TestIo.read(0, 4096);
        byte[] before = read.data();
        backend.submit(read);
        backend.unplug();
        assertTrue(read.await(20), mode + ": the request completes (never a hang)");
        assertEquals(1, read.completions.get(), "exactly once");
        assertNotNull(read.error, mode + ": an error, never a success");
        String message = read.error.getMessage();
        String expected = switch (mode) {
            case BAD_MAGIC -> "bad reply magic 0xdeadbeef";
            case WRONG_COOKIE -> "which no request in flight has";
            case OVERSIZE -> "NBD_REPLY_TYPE_OFFSET_DATA of 67108872 bytes";
            case OUT_OF_RANGE -> "is outside the read of 4096 bytes at 0";
            case TRUNCATED -> "failed 3 times";
            case SILENT -> "no reply in 500 ms";
            default -> throw new AssertionError(mode);
        };
        assertTrue(message.contains(expected), mode + ": " + message);
        if (mode == Mode.OUT_OF_RANGE || mode == Mode.OVERSIZE) {
            assertArrayEquals(before, read.data(), "no data of a rejected chunk reached the buffer");
        }
        otherDiskStillWorks();
    }

    @Test
    void aServerThatIsNotNbdIsRefusedAtOpen() throws Exception {
        hostile = new HostileNbdServer(dir, Mode.HANDSHAKE_BAD_MAGIC);
        IOException e = assertThrows(IOException.class, () -> NbdBackend.open(NbdUri.parse(hostile.uri()), false, FAST));
        assertTrue(e.getMessage().contains("is not an NBD server (bad magic 0x1122334455667788)"), e.getMessage());
        otherDiskStillWorks();
    }

    @Test
    void aWriteOnAReadOnlyOrMisalignedRangeIsRefusedWithoutAHang() throws Exception {
        NbdBackend ro = NbdBackend.open(NbdUri.parse(good.uri()), true, FAST);
        try {
            TestIo w = TestIo.write(0, new byte[512]);
            ro.submit(w);
            assertTrue(w.await(1));
            assertTrue(w.error.getMessage().contains("read-only"), w.error.getMessage());
            TestIo beyond = TestIo.read(HostileNbdServer.SIZE, 512);
            ro.submit(beyond);
            assertTrue(beyond.await(1));
            assertTrue(beyond.error.getMessage().contains("beyond the export"), beyond.error.getMessage());
        } finally {
            ro.close();
        }
    }
}
