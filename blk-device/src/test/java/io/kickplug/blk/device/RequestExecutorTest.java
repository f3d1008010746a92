package io.kickplug.blk.device;

import io.kickplug.blk.testkit.BackendIo;
import static io.kickplug.blk.fake.Headers.filled;
import static io.kickplug.blk.fake.Headers.header;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.fake.FakeChain;
import io.kickplug.blk.fake.RecordingBackend;
import io.kickplug.blk.fake.DiscardSegments;
import io.kickplug.blk.request.BlkLimits;
import io.kickplug.blk.request.BlkRequestParser;
import io.kickplug.blk.request.Outcome;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The request types of VIRTIO 1.2 section 5.2.6 run against a memory backend. */
class RequestExecutorTest {

    private static final long SIZE = 1 << 20;
    private static final long OPTIONAL = VirtioBlk.F_DISCARD | VirtioBlk.F_WRITE_ZEROES | VirtioBlk.F_SECURE_ERASE
            | VirtioBlk.F_LIFETIME;

    private final RecordingBackend backend = new RecordingBackend(new MemoryBackend(SIZE, false));
    private final BlkStats stats = new BlkStats();
    private final BlkMode mode = new BlkMode(BlkLimits.DEFAULTS);
    private final RequestProcessor processor = new RequestProcessor("x", backend, false, new byte[0], stats, mode);

    private byte[] disk(long offset, int length) throws IOException {
        return BackendIo.read(backend, offset, false, length);
    }

    private void fill(long offset, int length, int value) throws IOException {
        backend.write(offset, new ByteBuffer[] {ByteBuffer.wrap(filled(length, value))});
    }

    private int serve(int type, byte[] data) {
        FakeChain chain = FakeChain.builder().readable(header(type, 0)).readable(data).writable(1).build();
        assertEquals(1, InlineServe.serve(processor, chain));
        return chain.lastWritableByte();
    }

    // 5.2.6.2: after WRITE_ZEROES, reads of the range return zeroes; other bytes stay.
    @Test
    void writeZeroesThenReadReturnsZeroes() throws IOException {
        mode.negotiate(VirtioBlk.F_FLUSH | OPTIONAL);
        fill(0, 8192, 0x5A);
        byte[] segments = DiscardSegments.of(2).add(1, 2, 0).add(10, 3, 1).bytes();
        assertEquals(VirtioBlk.S_OK, serve(VirtioBlk.T_WRITE_ZEROES, segments));
        byte[] after = disk(0, 8192);
        for (int i = 0; i < 8192; i++) {
            int sector = i / 512;
            boolean zeroed = (sector >= 1 && sector < 3) || (sector >= 10 && sector < 13);
            assertEquals(zeroed ? 0 : 0x5A, after[i] & 0xFF, "byte " + i);
        }
        assertEquals(2, backend.zeroings.get());
        assertEquals(0, backend.flushes.get(), "write cache on: no flush");
    }

    // 5.2.6: DISCARD; Kickplug's backends read zeroes afterwards.
    @Test
    void discardOfSeveralSegments() throws IOException {
        mode.negotiate(VirtioBlk.F_FLUSH | OPTIONAL);
        fill(0, 4096, 0x11);
        assertEquals(VirtioBlk.S_OK, serve(VirtioBlk.T_DISCARD, DiscardSegments.of(2).add(0, 1, 0).add(7, 1, 0).bytes()));
        assertEquals(2, backend.discards.get());
        assertArrayEquals(new byte[512], disk(0, 512));
        assertArrayEquals(filled(512 * 6, 0x11), disk(512, 512 * 6));
        assertArrayEquals(new byte[512], disk(7 * 512, 512));
    }

    // 5.2.6: SECURE_ERASE leaves zeroes and is flushed before it completes.
    @Test
    void secureEraseZeroesAndFlushes() throws IOException {
        mode.negotiate(VirtioBlk.F_FLUSH | OPTIONAL);
        fill(0, 1024, 0x77);
        assertEquals(VirtioBlk.S_OK, serve(VirtioBlk.T_SECURE_ERASE, DiscardSegments.one(0, 2, 0)));
        assertArrayEquals(new byte[1024], disk(0, 1024));
        assertEquals(1, backend.flushes.get());
    }

    // 5.2.6.2: the request types need their features; unknown flags are refused before the backend.
    @Test
    void refusedSegmentRequestsNeverReachTheBackend() throws IOException {
        mode.negotiate(VirtioBlk.F_FLUSH);
        fill(0, 512, 0x42);
        assertEquals(VirtioBlk.S_UNSUPP, serve(VirtioBlk.T_WRITE_ZEROES, DiscardSegments.one(0, 1, 0)));
        mode.negotiate(VirtioBlk.F_FLUSH | OPTIONAL);
        assertEquals(VirtioBlk.S_UNSUPP, serve(VirtioBlk.T_WRITE_ZEROES, DiscardSegments.one(0, 1, 2)));
        assertEquals(VirtioBlk.S_UNSUPP, serve(VirtioBlk.T_DISCARD, DiscardSegments.one(0, 1, 1)));
        assertEquals(VirtioBlk.S_IOERR, serve(VirtioBlk.T_DISCARD, DiscardSegments.one(SIZE / 512, 1, 0)));
        assertEquals(0, backend.zeroings.get() + backend.discards.get());
        assertArrayEquals(filled(512, 0x42), disk(0, 512));
        assertEquals(3, stats.unsupported());
        assertEquals(1, stats.ioErrors());
    }

    @Test
    void backendFailureOfWriteZeroesIsAnIoError() {
        mode.negotiate(VirtioBlk.F_FLUSH | OPTIONAL);
        backend.failure = new IOException("no zeroes today");
        assertEquals(VirtioBlk.S_IOERR, serve(VirtioBlk.T_WRITE_ZEROES, DiscardSegments.one(0, 1, 0)));
    }

    // 5.2.6: GET_LIFETIME: pre_eol_info NORMAL (1), both estimates 0, little-endian.
    @Test
    void getLifetimeAnswersNormal() {
        mode.negotiate(VirtioBlk.F_LIFETIME);
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_GET_LIFETIME, 0)).writable(6).writable(1)
                .build();
        assertEquals(7, InlineServe.serve(processor, chain));
        byte[] written = chain.writtenContent();
        assertArrayEquals(new byte[] {1, 0, 0, 0, 0, 0}, Arrays.copyOf(written, 6));
        assertEquals(VirtioBlk.S_OK, written[6]);
    }

    // 5.2.6.2: in writethrough mode every completed write is flushed first.
    @Test
    void writethroughFlushesEveryWrite() {
        FakeChain write = FakeChain.builder().readable(header(VirtioBlk.T_OUT, 0)).readable(filled(512, 1))
                .writable(1).build();
        mode.negotiate(VirtioBlk.F_FLUSH | VirtioBlk.F_CONFIG_WCE);
        InlineServe.serve(processor, write);
        assertEquals(0, backend.flushes.get(), "writeback: the cache may hold the write");

        mode.setWriteback(false);
        InlineServe.serve(processor, FakeChain.builder().readable(header(VirtioBlk.T_OUT, 0)).readable(filled(512, 2)).writable(1)
                .build());
        assertEquals(1, backend.flushes.get(), "CONFIG_WCE writeback 0: writethrough");

        mode.negotiate(0);
        InlineServe.serve(processor, FakeChain.builder().readable(header(VirtioBlk.T_OUT, 0)).readable(filled(512, 3)).writable(1)
                .build());
        assertEquals(2, backend.flushes.get(), "a driver that cannot flush gets writethrough");
        assertEquals(3, backend.writes.get());
    }

    @Test
    void failedWritethroughFlushFailsTheWrite() {
        mode.negotiate(0);
        RecordingBackend failingFlush = new RecordingBackend(new MemoryBackend(SIZE, false)) {
            @Override
            public void flush() throws IOException {
                throw new IOException("fsync failed");
            }
        };
        RequestExecutor executor = new RequestExecutor("x", failingFlush, new byte[0], mode);
        FakeChain write = FakeChain.builder().readable(header(VirtioBlk.T_OUT, 0)).readable(filled(512, 1))
                .writable(1).build();
        assertEquals(Outcome.IOERR,
                executor.execute(BlkRequestParser.parse(write, SIZE / 512, false, 0, BlkLimits.DEFAULTS)).outcome());
    }
}
