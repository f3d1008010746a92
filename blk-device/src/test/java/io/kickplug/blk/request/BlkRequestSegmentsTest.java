package io.kickplug.blk.request;

import static io.kickplug.blk.fake.Headers.header;
import static io.kickplug.blk.fake.Headers.part;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.fake.FakeChain;
import io.kickplug.blk.fake.DiscardSegments;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** DISCARD, WRITE_ZEROES, SECURE_ERASE and GET_LIFETIME parsing (VIRTIO 1.2 section 5.2.6). */
class BlkRequestSegmentsTest {

    private static final long CAPACITY = 2048;
    private static final long ALL = VirtioBlk.F_DISCARD | VirtioBlk.F_WRITE_ZEROES | VirtioBlk.F_SECURE_ERASE
            | VirtioBlk.F_LIFETIME;
    private static final BlkLimits LIMITS = new BlkLimits(64, 4, 1, 128, 3, true, 256, 2, 1);

    private static BlkRequest parse(FakeChain chain) {
        return BlkRequestParser.parse(chain, CAPACITY, false, ALL, LIMITS);
    }

    private static FakeChain request(int type, byte[] segments) {
        return FakeChain.builder().readable(header(type, 0)).readable(segments).writable(1).build();
    }

    private static Outcome refusal(BlkRequest request) {
        return request.rejection() == null ? Outcome.OK : request.rejection().outcome();
    }

    // 5.2.6: the data of a discard is an array of segments; several per request.
    @Test
    void discardSegmentsAreCopiedInOrder() {
        byte[] segments = DiscardSegments.of(3).add(0, 8, 0).add(100, 64, 0).add(CAPACITY - 1, 1, 0).bytes();
        BlkRequest request = parse(request(VirtioBlk.T_DISCARD, segments));
        assertNull(request.rejection());
        assertEquals(RequestType.DISCARD, request.kind());
        assertEquals(48, request.dataBytes());
        assertEquals(List.of(new DiscardSegment(0, 8, 0), new DiscardSegment(100, 64, 0),
                new DiscardSegment(CAPACITY - 1, 1, 0)), request.segments());
        assertThrows(UnsupportedOperationException.class, () -> request.segments().clear());
    }

    // 2.7.4: a segment split across descriptors is read the same.
    @Test
    void segmentsSplitAcrossDescriptors() {
        byte[] segments = DiscardSegments.of(2).add(7, 9, 1).add(20, 3, 0).bytes();
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_WRITE_ZEROES, 0))
                .readable(part(segments, 0, 5)).readable(part(segments, 5, 27)).readable(part(segments, 27, 32))
                .writable(1).build();
        BlkRequest request = parse(chain);
        assertNull(request.rejection());
        assertEquals(List.of(new DiscardSegment(7, 9, 1), new DiscardSegment(20, 3, 0)), request.segments());
        assertTrue(request.segments().get(0).unmap());
    }

    // 5.2.3: a request type whose feature was not negotiated is unsupported.
    @ParameterizedTest
    @ValueSource(ints = {VirtioBlk.T_DISCARD, VirtioBlk.T_WRITE_ZEROES, VirtioBlk.T_SECURE_ERASE,
            VirtioBlk.T_GET_LIFETIME})
    void typesWithoutTheirFeatureAreUnsupported(int type) {
        FakeChain chain = request(type, DiscardSegments.one(0, 1, 0));
        assertEquals(Outcome.UNSUPP, refusal(BlkRequestParser.parse(chain, CAPACITY, false, 0, LIMITS)));
        RequestType kind = RequestType.dispatch(type);
        long others = ALL & ~kind.requiredFeature();
        assertEquals(Outcome.UNSUPP, refusal(BlkRequestParser.parse(request(type, DiscardSegments.one(0, 1, 0)), CAPACITY,
                false, others, LIMITS)), "only its own feature counts");
    }

    // 5.2.6.2: unknown flags on discard, secure erase and write zeroes -> UNSUPP.
    @ParameterizedTest
    @ValueSource(ints = {VirtioBlk.T_DISCARD, VirtioBlk.T_WRITE_ZEROES, VirtioBlk.T_SECURE_ERASE})
    void unknownFlagsAreUnsupported(int type) {
        byte[] segments = DiscardSegments.of(2).add(0, 1, 0).add(1, 1, 0x2).bytes();
        BlkRequest request = parse(request(type, segments));
        assertEquals(Outcome.UNSUPP, refusal(request));
        assertEquals(List.of(), request.segments());
        assertEquals(Outcome.UNSUPP, refusal(parse(request(type, DiscardSegments.one(0, 1, 0x80000000)))));
    }

    // 5.2.6.2: a discard with the unmap flag -> UNSUPP; write zeroes and secure erase accept it.
    @Test
    void unmapFlag() {
        assertEquals(Outcome.UNSUPP, refusal(parse(request(VirtioBlk.T_DISCARD, DiscardSegments.one(0, 1, 1)))));
        assertEquals(Outcome.OK, refusal(parse(request(VirtioBlk.T_WRITE_ZEROES, DiscardSegments.one(0, 1, 1)))));
        assertEquals(Outcome.OK, refusal(parse(request(VirtioBlk.T_SECURE_ERASE, DiscardSegments.one(0, 1, 1)))));
    }

    // An unknown flag is reported as UNSUPP even when another segment is also out of range.
    @Test
    void flagsAreCheckedBeforeRanges() {
        byte[] segments = DiscardSegments.of(2).add(CAPACITY, 1, 0).add(0, 1, 4).bytes();
        assertEquals(Outcome.UNSUPP, refusal(parse(request(VirtioBlk.T_WRITE_ZEROES, segments))));
    }

    // 5.2.6: segments beyond the capacity -> IOERR, with overflow-safe arithmetic.
    @ParameterizedTest
    @ValueSource(ints = {VirtioBlk.T_DISCARD, VirtioBlk.T_WRITE_ZEROES, VirtioBlk.T_SECURE_ERASE})
    void outOfRangeSegmentsAreIoErrors(int type) {
        assertEquals(Outcome.IOERR, refusal(parse(request(type, DiscardSegments.one(CAPACITY - 1, 2, 0)))));
        assertEquals(Outcome.IOERR, refusal(parse(request(type, DiscardSegments.one(CAPACITY + 1, 0, 0)))));
        assertEquals(Outcome.IOERR, refusal(parse(request(type, DiscardSegments.one(-1L, 1, 0)))));
        assertEquals(Outcome.IOERR, refusal(parse(request(type, DiscardSegments.one(Long.MAX_VALUE, 2, 0)))));
        byte[] secondBad = DiscardSegments.of(2).add(0, 1, 0).add(CAPACITY, 1, 0).bytes();
        assertEquals(Outcome.IOERR, refusal(parse(request(type, secondBad))));
        // The last sector and an empty segment at the end are in range.
        assertEquals(Outcome.OK, refusal(parse(request(type, DiscardSegments.of(2).add(CAPACITY - 1, 1, 0)
                .add(CAPACITY, 0, 0).bytes()))));
    }

    // 5.2.6.1: max_discard_sectors, max_write_zeroes_sectors, max_secure_erase_sectors per segment.
    @Test
    void sectorLimitsPerType() {
        assertEquals(Outcome.OK, refusal(parse(request(VirtioBlk.T_DISCARD, DiscardSegments.one(0, 64, 0)))));
        assertEquals(Outcome.IOERR, refusal(parse(request(VirtioBlk.T_DISCARD, DiscardSegments.one(0, 65, 0)))));
        assertEquals(Outcome.OK, refusal(parse(request(VirtioBlk.T_WRITE_ZEROES, DiscardSegments.one(0, 128, 0)))));
        assertEquals(Outcome.IOERR, refusal(parse(request(VirtioBlk.T_WRITE_ZEROES, DiscardSegments.one(0, 129, 0)))));
        assertEquals(Outcome.OK, refusal(parse(request(VirtioBlk.T_SECURE_ERASE, DiscardSegments.one(0, 256, 0)))));
        assertEquals(Outcome.IOERR, refusal(parse(request(VirtioBlk.T_SECURE_ERASE, DiscardSegments.one(0, 257, 0)))));
        // num_sectors is unsigned: 0xFFFFFFFF is huge, not -1.
        assertEquals(Outcome.IOERR, refusal(parse(request(VirtioBlk.T_DISCARD, DiscardSegments.one(0, -1, 0)))));
    }

    // 5.2.6.1: max_discard_seg, max_write_zeroes_seg, max_secure_erase_seg; more segments -> IOERR.
    @Test
    void segmentCountLimitsPerType() {
        assertEquals(Outcome.OK, refusal(parse(request(VirtioBlk.T_DISCARD, segments(4)))));
        assertEquals(Outcome.IOERR, refusal(parse(request(VirtioBlk.T_DISCARD, segments(5)))));
        assertEquals(Outcome.OK, refusal(parse(request(VirtioBlk.T_WRITE_ZEROES, segments(3)))));
        assertEquals(Outcome.IOERR, refusal(parse(request(VirtioBlk.T_WRITE_ZEROES, segments(4)))));
        assertEquals(Outcome.OK, refusal(parse(request(VirtioBlk.T_SECURE_ERASE, segments(2)))));
        assertEquals(Outcome.IOERR, refusal(parse(request(VirtioBlk.T_SECURE_ERASE, segments(3)))));
    }

    private static byte[] segments(int count) {
        DiscardSegments segments = DiscardSegments.of(count);
        for (int i = 0; i < count; i++) {
            segments.add(i, 1, 0);
        }
        return segments.bytes();
    }

    // 5.2.6: segments are device-readable, whole 16-byte records, at least one.
    @Test
    void malformedSegmentDataIsAnIoError() {
        FakeChain none = FakeChain.builder().readable(header(VirtioBlk.T_DISCARD, 0)).writable(1).build();
        assertEquals(Outcome.IOERR, refusal(parse(none)));
        assertEquals(Outcome.IOERR, refusal(parse(request(VirtioBlk.T_DISCARD, new byte[20]))));
        FakeChain writable = FakeChain.builder().readable(header(VirtioBlk.T_WRITE_ZEROES, 0))
                .readable(DiscardSegments.one(0, 1, 0)).writable(16).writable(1).build();
        assertEquals(Outcome.IOERR, refusal(parse(writable)));
    }

    // 5.2.6.2: a read-only device fails every write with IOERR.
    @ParameterizedTest
    @ValueSource(ints = {VirtioBlk.T_DISCARD, VirtioBlk.T_WRITE_ZEROES, VirtioBlk.T_SECURE_ERASE})
    void readOnlyRefusesSegmentRequests(int type) {
        BlkRequest request = BlkRequestParser.parse(request(type, DiscardSegments.one(0, 1, 0)), CAPACITY, true, ALL,
                LIMITS);
        assertEquals(Outcome.IOERR, refusal(request));
    }

    // 5.2.6: GET_LIFETIME answers 6 device-writable bytes.
    @Test
    void getLifetimeTakesSixWritableBytes() {
        FakeChain chain = FakeChain.builder().readable(header(VirtioBlk.T_GET_LIFETIME, 0)).writable(6).writable(1)
                .build();
        BlkRequest request = parse(chain);
        assertNull(request.rejection());
        assertEquals(6, request.dataBytes());
        assertEquals(6, request.sink().remaining());

        FakeChain larger = FakeChain.builder().readable(header(VirtioBlk.T_GET_LIFETIME, 0)).writable(64).build();
        assertEquals(6, parse(larger).sink().remaining());

        FakeChain shorter = FakeChain.builder().readable(header(VirtioBlk.T_GET_LIFETIME, 0)).writable(5).writable(1)
                .build();
        assertEquals(Outcome.IOERR, refusal(parse(shorter)));

        FakeChain readableData = FakeChain.builder().readable(header(VirtioBlk.T_GET_LIFETIME, 0))
                .readable(new byte[6]).writable(7).build();
        assertEquals(Outcome.IOERR, refusal(parse(readableData)));
    }

    // 5.2.6: DISCARD (11) is not GET_LIFETIME (10) with the OUT bit; 15 is unknown.
    @Test
    void newTypesDispatchExactly() {
        assertEquals(RequestType.GET_LIFETIME, RequestType.dispatch(VirtioBlk.T_GET_LIFETIME));
        assertEquals(RequestType.DISCARD, RequestType.dispatch(VirtioBlk.T_DISCARD));
        assertEquals(RequestType.WRITE_ZEROES, RequestType.dispatch(VirtioBlk.T_WRITE_ZEROES));
        assertEquals(RequestType.SECURE_ERASE, RequestType.dispatch(VirtioBlk.T_SECURE_ERASE));
        assertEquals(RequestType.UNSUPPORTED, RequestType.dispatch(15));
        assertEquals(RequestType.UNSUPPORTED, RequestType.dispatch(12));
    }

    @Test
    void limitsAreValidated() {
        assertThrows(IllegalArgumentException.class, () -> new BlkLimits(0, 1, 1, 1, 1, true, 1, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new BlkLimits(1, 0, 1, 1, 1, true, 1, 1, 1));
        assertThrows(IllegalArgumentException.class, () -> new BlkLimits(1L << 32, 1, 1, 1, 1, true, 1, 1, 1));
    }
}
