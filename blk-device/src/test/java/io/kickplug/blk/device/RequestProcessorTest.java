package io.kickplug.blk.device;

import io.kickplug.blk.testkit.BackendIo;
import static io.kickplug.blk.fake.Headers.concat;
import static io.kickplug.blk.fake.Headers.filled;
import static io.kickplug.blk.fake.Headers.header;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.fake.FakeChain;
import io.kickplug.blk.fake.RecordingBackend;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class RequestProcessorTest {

    private static final long SIZE = 1 << 20;

    private final RecordingBackend backend = new RecordingBackend(new MemoryBackend(SIZE, false));
    private final BlkStats stats = new BlkStats();
    private final RequestProcessor processor = new RequestProcessor("t", backend, false,
            "serial-0123".getBytes(StandardCharsets.US_ASCII), stats, BlkMode.negotiated(VirtioBlk.F_FLUSH));

    private byte[] disk(long offset, int length) throws IOException {
        return BackendIo.read(backend, offset, false, length);
    }

    @Test
    void writeThenReadRoundTrips() throws IOException {
        byte[] data = concat(filled(512, 0x11), filled(512, 0x22));
        FakeChain write = FakeChain.builder().head(1).readable(header(VirtioBlk.T_OUT, 4)).readable(data)
                .writable(1).build();
        // Section 5.2.6: a write writes only the status byte.
        assertEquals(1, InlineServe.serve(processor, write));
        assertEquals(VirtioBlk.S_OK, write.lastWritableByte());
        assertArrayEquals(data, disk(4 * 512, 1024));

        FakeChain read = FakeChain.builder().head(2).readable(header(VirtioBlk.T_IN, 4)).writable(700).writable(325)
                .build();
        assertEquals(1024 + 1, InlineServe.serve(processor, read));
        byte[] written = read.writtenContent();
        assertEquals(VirtioBlk.S_OK, written[1024]);
        assertArrayEquals(data, Arrays.copyOf(written, 1024));

        assertEquals(2, stats.requestsCompleted());
        assertEquals(0, stats.requestsInFlight());
        assertEquals(1024, stats.bytesWritten());
        assertEquals(1024, stats.bytesRead());
    }

    // Section 5.2.6.2: a read-only device fails writes with IOERR and MUST NOT write.
    @Test
    void writeToReadOnlyDiskNeverReachesTheBackend() throws IOException {
        RequestProcessor readOnly = new RequestProcessor("ro", backend, true, new byte[0], stats,
                BlkMode.negotiated(VirtioBlk.F_FLUSH));
        FakeChain write = FakeChain.builder().readable(header(VirtioBlk.T_OUT, 0)).readable(filled(512, 0x7F))
                .writable(1).build();
        assertEquals(1, InlineServe.serve(readOnly, write));
        assertEquals(VirtioBlk.S_IOERR, write.lastWritableByte());
        assertEquals(0, backend.writes.get());
        assertArrayEquals(new byte[512], disk(0, 512));
        assertEquals(1, stats.ioErrors());
    }

    @Test
    void outOfRangeReadIsAnIoErrorWithoutBackendCall() {
        FakeChain read = FakeChain.builder().readable(header(VirtioBlk.T_IN, SIZE / 512)).writable(512).writable(1)
                .build();
        assertEquals(1, InlineServe.serve(processor, read));
        assertEquals(VirtioBlk.S_IOERR, read.lastWritableByte());
        assertEquals(0, backend.reads.get());
    }

    @Test
    void unknownTypeIsUnsupported() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_DISCARD, 0)).readable(new byte[16])
                .writable(1).build();
        assertEquals(1, InlineServe.serve(processor, chain));
        assertEquals(VirtioBlk.S_UNSUPP, chain.lastWritableByte());
        assertEquals(1, stats.unsupported());
    }

    @Test
    void oddLengthIsAnIoError() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_IN, 0)).writable(511).writable(1).build();
        assertEquals(1, InlineServe.serve(processor, chain));
        assertEquals(VirtioBlk.S_IOERR, chain.lastWritableByte());
    }

    // Section 5.2.6: GET_ID answers 20 bytes, zero-padded when the serial is shorter.
    @Test
    void getIdWritesTwentyBytes() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_GET_ID, 0)).writable(20).writable(1)
                .build();
        assertEquals(21, InlineServe.serve(processor, chain));
        byte[] written = chain.writtenContent();
        assertArrayEquals(Arrays.copyOf("serial-0123".getBytes(StandardCharsets.US_ASCII), 20),
                Arrays.copyOf(written, 20));
        assertEquals(VirtioBlk.S_OK, written[20]);
    }

    @Test
    void getIdIntoAShortBufferIsTruncated() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_GET_ID, 0)).writable(7).build();
        assertEquals(7, InlineServe.serve(processor, chain));
        byte[] written = chain.writtenContent();
        assertArrayEquals("serial".getBytes(StandardCharsets.US_ASCII), Arrays.copyOf(written, 6));
        assertEquals(VirtioBlk.S_OK, written[6]);
    }

    @Test
    void flushReachesTheBackend() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_FLUSH, 0)).writable(1).build();
        assertEquals(1, InlineServe.serve(processor, chain));
        assertEquals(VirtioBlk.S_OK, chain.lastWritableByte());
        assertEquals(1, backend.flushes.get());
    }

    @Test
    void backendFailureIsAnIoError() {
        backend.failure = new IOException("disk on fire");
        FakeChain read = FakeChain.builder().readable(header(VirtioBlk.T_IN, 0)).writable(512).writable(1).build();
        // A failed read claims no data bytes (2.7.8.2: len must not overstate what was written).
        assertEquals(1, InlineServe.serve(processor, read));
        assertEquals(VirtioBlk.S_IOERR, read.lastWritableByte());
        assertEquals(1, stats.ioErrors());
        assertEquals(0, stats.bytesRead());
    }

    @Test
    void malformedChainIsAGuestFaultAndLeavesNothingInFlight() {
        FakeChain chain = FakeChain.builder().readable(new byte[12]).writable(1).build();
        assertThrows(GuestFaultException.class, () -> InlineServe.serve(processor, chain));
        assertEquals(0, stats.requestsInFlight());
        assertEquals(0, stats.requestsCompleted());
        assertEquals((byte) 0xEE, chain.writtenContent()[0], "no status is written for a malformed chain");
    }
}
