package io.kickplug.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendIo.Op;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * proto.md, "Block size constraints": a READ or WRITE longer than the server's maximum payload is sent as several
 * commands (the client MUST NOT send a longer one), not failed. nbdkit (started by the test) announces a maximum
 * of 64 KiB and fails longer requests itself, so a request that was not split would fail.
 */
class NbdMaxPayloadTest {

    private static final int MAX = 64 << 10;
    private Path dir;
    private NbdServer server;
    private NbdBackend backend;

    @BeforeEach
    void setUp() throws Exception {
        dir = Files.createTempDirectory("kp-nbd-max");
        server = NbdServer.nbdkitMemoryMaxPayload(dir, "4M", MAX);
        backend = NbdBackend.open(NbdUri.parse(server.uri("")), false, NbdBackend.Options.DEFAULTS);
    }

    @AfterEach
    void tearDown() throws IOException {
        if (backend != null) {
            backend.close();
        }
        server.close();
        try (var files = Files.walk(dir)) {
            files.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
        }
    }

    private TestIo run(TestIo io) throws InterruptedException {
        backend.submit(io);
        backend.unplug();
        assertTrue(io.await(10), io.op() + " completed");
        assertEquals(1, io.completions.get(), "completed once");
        return io;
    }

    @Test
    void requestsLongerThanTheMaximumPayloadAreSplitAndReadBackWhole() throws Exception {
        assertEquals(MAX, backend.info().maxPayload(), "the server announced its maximum");
        byte[] data = new byte[4 * MAX + 4096]; // 5 parts, the last one short
        new Random(7).nextBytes(data);
        // Scattered over buffers whose edges do not fall on the parts' edges, as a guest's segments.
        int[] pieces = {4096, 100 * 1024, 3 * 4096, data.length - 4096 - 100 * 1024 - 3 * 4096};
        ByteBuffer[] src = new ByteBuffer[pieces.length];
        int at = 0;
        for (int i = 0; i < pieces.length; i++) {
            src[i] = ByteBuffer.allocateDirect(pieces[i] + 8).position(8).slice();
            src[i].put(0, data, at, pieces[i]);
            at += pieces[i];
        }
        assertNull(run(new TestIo(Op.WRITE, 8192, data.length, src, false, false)).error);
        ByteBuffer[] dst = {ByteBuffer.allocateDirect(70 * 1024), ByteBuffer.allocate(data.length - 70 * 1024)};
        assertNull(run(new TestIo(Op.READ, 8192, data.length, dst, false, false)).error);
        byte[] back = new byte[data.length];
        dst[0].get(0, back, 0, dst[0].capacity());
        dst[1].get(0, back, dst[0].capacity(), dst[1].capacity());
        assertArrayEquals(data, back, "what was written in parts reads back whole, in parts");
        // One part's worth still goes as one command, and a short read of the middle sees the same bytes.
        TestIo mid = run(TestIo.read(8192 + MAX - 512, MAX));
        assertNull(mid.error);
        byte[] expect = new byte[MAX];
        System.arraycopy(data, MAX - 512, expect, 0, MAX);
        assertArrayEquals(expect, mid.data());
    }
}
