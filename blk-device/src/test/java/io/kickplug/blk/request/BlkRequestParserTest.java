package io.kickplug.blk.request;

import static io.kickplug.blk.fake.Headers.concat;
import static io.kickplug.blk.fake.Headers.filled;
import static io.kickplug.blk.fake.Headers.header;
import static io.kickplug.blk.fake.Headers.part;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.blk.fake.FakeChain;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class BlkRequestParserTest {

    private static final long CAPACITY = 2048; // sectors: 1 MiB

    private static BlkRequest parse(FakeChain chain) {
        return BlkRequestParser.parse(chain, CAPACITY, false);
    }

    /** The chain is answered with IOERR, for a reason that names {@code reasonPart} ("" for any reason). */
    private static void assertIoError(FakeChain chain, String reasonPart) {
        BlkRequest request = parse(chain);
        assertEquals(Outcome.IOERR, request.rejection().outcome());
        assertTrue(request.rejection().reason().contains(reasonPart), request.rejection().reason());
    }

    private static byte[] readAll(BlkRequest request) {
        byte[] data = new byte[(int) request.source().remaining()];
        request.source().read(data, 0, data.length);
        return data;
    }

    // Section 2.7.4: the header may be split across descriptors any way the driver likes.
    @Test
    void headerInOneDescriptorWithDataInAnother() {
        byte[] data = filled(512, 0x5A);
        FakeChain chain = FakeChain.builder().head(7).readable(header(VirtioBlk.T_OUT, 42)).readable(data)
                .writable(1).build();
        BlkRequest request = parse(chain);
        assertEquals(RequestType.OUT, request.kind());
        assertEquals(7, request.head());
        assertEquals(42, request.sector());
        assertEquals(512, request.dataBytes());
        assertNull(request.rejection());
        assertArrayEquals(data, readAll(request));
    }

    @Test
    void headerAndDataInOneDescriptor() {
        byte[] data = filled(1024, 0x33);
        FakeChain chain = FakeChain.builder().readable(concat(header(VirtioBlk.T_OUT, 3), data)).writable(1).build();
        BlkRequest request = parse(chain);
        assertEquals(RequestType.OUT, request.kind());
        assertEquals(3, request.sector());
        assertEquals(1024, request.dataBytes());
        assertArrayEquals(data, readAll(request));
    }

    @Test
    void headerSplitOverTwoDescriptors() {
        byte[] h = header(VirtioBlk.T_IN, 0x0102030405L);
        FakeChain chain = FakeChain.builder().readable(part(h, 0, 5)).readable(part(h, 5, 16)).writable(512)
                .writable(1).build();
        BlkRequest request = BlkRequestParser.parse(chain, 1L << 40, false);
        assertEquals(RequestType.IN, request.kind());
        assertEquals(0x0102030405L, request.sector());
        assertEquals(512, request.dataBytes());
    }

    @Test
    void headerSplitOverThreeDescriptorsWithDataInTheLast() {
        byte[] h = header(VirtioBlk.T_OUT, 9);
        byte[] data = filled(512, 0x77);
        FakeChain chain = FakeChain.builder().readable(part(h, 0, 4)).readable(part(h, 4, 12))
                .readable(concat(part(h, 12, 16), data)).writable(1).build();
        BlkRequest request = parse(chain);
        assertEquals(9, request.sector());
        assertEquals(512, request.dataBytes());
        assertArrayEquals(data, readAll(request));
    }

    // Section 5.2.6: the status is the last device-writable byte, however the writable part is split.
    @Test
    void statusIsTheLastByteOfTheWritableArea() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_IN, 0)).writable(300).writable(0)
                .writable(213).build();
        BlkRequest request = parse(chain);
        assertEquals(512, request.dataBytes());
        assertEquals(512, request.sink().remaining());
        assertEquals(1, request.status().remaining());
        request.status().writeU8(0x42);
        byte[] written = chain.writtenContent();
        assertEquals(0x42, written[written.length - 1]);
        for (int i = 0; i < written.length - 1; i++) {
            assertEquals((byte) 0xEE, written[i], "byte " + i + " is data space, not the status");
        }
    }

    @Test
    void dataAndStatusInOneWritableBuffer() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_IN, 1)).writable(1025).build();
        BlkRequest request = parse(chain);
        assertEquals(RequestType.IN, request.kind());
        assertEquals(1024, request.dataBytes());
        assertNull(request.rejection());
    }

    // Section 5.2.6: a request for sectors past the capacity fails with IOERR.
    @Test
    void rangeEndingAtTheCapacityIsAccepted() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_IN, CAPACITY - 2)).writable(1024)
                .writable(1).build();
        assertNull(parse(chain).rejection());
    }

    @Test
    void rangePastTheCapacityIsAnIoError() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_IN, CAPACITY - 1)).writable(1024)
                .writable(1).build();
        BlkRequest request = parse(chain);
        assertEquals(Outcome.IOERR, request.rejection().outcome());
        assertNull(request.sink());
    }

    @ParameterizedTest
    @ValueSource(longs = {-1L, -2L, Long.MIN_VALUE, Long.MAX_VALUE, CAPACITY + 1})
    void sectorsNearTwoToTheSixtyFourAreIoErrors(long sector) {
        FakeChain chain = FakeChain.builder().readable(concat(header(VirtioBlk.T_OUT, sector), new byte[512]))
                .writable(1).build();
        assertIoError(chain, "");
    }

    @Test
    void rangeCheckSurvivesOverflowOfTheEndSector() {
        assertFalse(BlkRequestParser.inRange(Long.MAX_VALUE - 1, 4, Long.MAX_VALUE));
        // Unsigned: sector 2^64 - 8 plus 16 wraps to 8, which must not pass for capacity 2^64 - 1.
        assertFalse(BlkRequestParser.inRange(-8L, 16, -1L));
        assertTrue(BlkRequestParser.inRange(-8L, 7, -1L));
        assertTrue(BlkRequestParser.inRange(Long.MAX_VALUE - 4, 4, Long.MAX_VALUE));
        assertTrue(BlkRequestParser.inRange(0, 0, 0));
        assertFalse(BlkRequestParser.inRange(1, 0, 0));
    }

    // Section 5.2.6.1: IN/OUT data is a multiple of 512 bytes; the device answers anything else with IOERR.
    @Test
    void readLengthNotAMultipleOf512IsAnIoError() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_IN, 0)).writable(100).writable(1).build();
        assertIoError(chain, "multiple of 512");
    }

    @Test
    void writeLengthNotAMultipleOf512IsAnIoError() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_OUT, 0)).readable(new byte[513])
                .writable(1).build();
        assertIoError(chain, "");
    }

    // Section 5.2.6: IN data is device-writable, OUT data device-readable.
    @Test
    void readWithDeviceReadableDataIsAnIoError() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_IN, 0)).readable(new byte[512])
                .writable(512).writable(1).build();
        assertIoError(chain, "device-readable");
    }

    @Test
    void writeWithDeviceWritableDataIsAnIoError() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_OUT, 0)).readable(new byte[512])
                .writable(512).writable(1).build();
        assertIoError(chain, "");
    }

    // Section 5.2.6.2: a device with VIRTIO_BLK_F_RO fails writes with IOERR.
    @Test
    void writeToReadOnlyDiskIsAnIoError() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_OUT, 0)).readable(new byte[512])
                .writable(1).build();
        BlkRequest request = BlkRequestParser.parse(chain, CAPACITY, true);
        assertEquals(Outcome.IOERR, request.rejection().outcome());
        assertNull(request.source());
    }

    @Test
    void readFromReadOnlyDiskIsServed() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_IN, 0)).writable(512).writable(1).build();
        assertNull(BlkRequestParser.parse(chain, CAPACITY, true).rejection());
    }

    // Section 5.2.6: types the device does not know are answered with UNSUPP.
    @ParameterizedTest
    @ValueSource(ints = {2, 3, 6, 7, 12, 15, 16, 0x80000000, -1})
    void unknownTypesAreUnsupported(int type) {
        FakeChain chain = FakeChain.builder().readable(header(type, 0)).writable(1).build();
        BlkRequest request = parse(chain);
        assertEquals(RequestType.UNSUPPORTED, request.kind());
        assertEquals(Outcome.UNSUPP, request.rejection().outcome());
        assertEquals(type, request.type());
    }

    // QEMU dispatches on type & ~VIRTIO_BLK_T_OUT: legacy FLUSH_OUT (5) flushes.
    @Test
    void outBitIsMaskedForDispatch() {
        assertEquals(RequestType.FLUSH, RequestType.dispatch(VirtioBlk.T_FLUSH | VirtioBlk.T_OUT));
        assertEquals(RequestType.GET_ID, RequestType.dispatch(VirtioBlk.T_GET_ID | VirtioBlk.T_OUT));
        assertEquals(RequestType.OUT, RequestType.dispatch(VirtioBlk.T_OUT));
        assertEquals(RequestType.IN, RequestType.dispatch(VirtioBlk.T_IN));
    }

    @Test
    void flushNeedsNoData() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_FLUSH, 0)).writable(1).build();
        BlkRequest request = parse(chain);
        assertEquals(RequestType.FLUSH, request.kind());
        assertNull(request.rejection());
        assertEquals(0, request.dataBytes());
    }

    // Section 5.2.6.1: GET_ID uses 20 bytes; a shorter buffer gets a truncated id.
    @ParameterizedTest
    @ValueSource(ints = {0, 8, 19, 20, 64})
    void getIdUsesAtMostTwentyBytes(int space) {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_GET_ID, 0)).writable(space).writable(1)
                .build();
        BlkRequest request = parse(chain);
        assertEquals(RequestType.GET_ID, request.kind());
        assertEquals(Math.min(space, 20), request.dataBytes());
        assertEquals(Math.min(space, 20), request.sink().remaining());
        assertEquals(1, request.status().remaining());
    }

    // Section 5.2.6: a chain that cannot hold the 16-byte header or the status byte is malformed.
    @Test
    void shortHeaderIsAGuestFault() {
        byte[] h = header(VirtioBlk.T_IN, 0);
        FakeChain chain = FakeChain.builder().readable(part(h, 0, 8)).readable(part(h, 8, 15)).writable(513).build();
        GuestFaultException fault = assertThrows(GuestFaultException.class, () -> parse(chain));
        assertEquals("5.2.6", fault.section());
    }

    @Test
    void missingStatusByteIsAGuestFault() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_FLUSH, 0)).build();
        GuestFaultException fault = assertThrows(GuestFaultException.class, () -> parse(chain));
        assertEquals("5.2.6", fault.section());
    }

    @Test
    void onlyEmptyWritableBuffersIsAGuestFault() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_FLUSH, 0)).writable(0).writable(0).build();
        assertThrows(GuestFaultException.class, () -> parse(chain));
    }

    @Test
    void dataViewsCoverTheDataOnly() {
        byte[] data = concat(filled(256, 1), filled(256, 2));
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_OUT, 0)).readable(part(data, 0, 100))
                .readable(part(data, 100, 512)).writable(1).build();
        BlkRequest request = parse(chain);
        ByteBuffer[] views = request.source().views(request.dataBytes());
        ByteBuffer joined = ByteBuffer.allocate(512);
        for (ByteBuffer view : views) {
            joined.put(view);
        }
        assertArrayEquals(data, joined.array());
        assertEquals(0, request.source().remaining());
    }
}
