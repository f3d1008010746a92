package io.kickplug.blk.request;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.fake.FakeChain;
import io.kickplug.blk.fake.Headers;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import net.jqwik.api.constraints.LongRange;

/** Section 2.7.4.1: the device must not depend on how the driver splits a request into descriptors. */
class BlkRequestFramingPropertyTest {

    private static List<byte[]> splitRandomly(byte[] bytes, int pieces, Random random) {
        List<byte[]> parts = new ArrayList<>();
        int at = 0;
        for (int i = 0; i < pieces - 1; i++) {
            int cut = at + random.nextInt(bytes.length - at + 1); // empty pieces allowed
            parts.add(Headers.part(bytes, at, cut));
            at = cut;
        }
        parts.add(Headers.part(bytes, at, bytes.length));
        return parts;
    }

    @Property(tries = 300)
    void writeParsesTheSameHoweverSplit(@ForAll @IntRange(min = 1, max = 8) int readablePieces,
            @ForAll @IntRange(min = 0, max = 4) int sectors, @ForAll @LongRange(min = 0, max = 1000) long sector,
            @ForAll long seed) {
        Random random = new Random(seed);
        byte[] data = new byte[sectors * 512];
        random.nextBytes(data);
        byte[] readable = Headers.concat(Headers.header(VirtioBlk.T_OUT, sector), data);
        FakeChain.Builder builder = FakeChain.builder();
        splitRandomly(readable, readablePieces, random).forEach(builder::readable);
        FakeChain chain = builder.writable(1).build();

        BlkRequest request = BlkRequestParser.parse(chain, 4096, false);

        assertEquals(RequestType.OUT, request.kind());
        assertEquals(sector, request.sector());
        assertNull(request.rejection());
        byte[] got = new byte[(int) request.dataBytes()];
        request.source().read(got, 0, got.length);
        assertArrayEquals(data, got);
    }

    @Property(tries = 300)
    void readPutsStatusLastHoweverSplit(@ForAll @IntRange(min = 1, max = 6) int writablePieces,
            @ForAll @IntRange(min = 0, max = 4) int sectors, @ForAll long seed) {
        Random random = new Random(seed);
        byte[] writable = new byte[sectors * 512 + 1];
        FakeChain.Builder builder = FakeChain.builder().readable(Headers.header(VirtioBlk.T_IN, 0));
        for (byte[] piece : splitRandomly(writable, writablePieces, random)) {
            builder.writable(piece.length);
        }
        FakeChain chain = builder.build();

        BlkRequest request = BlkRequestParser.parse(chain, 4096, false);
        request.sink().writeZeroes(request.sink().remaining());
        request.status().writeU8(VirtioBlk.S_UNSUPP);

        assertEquals(sectors * 512L, request.dataBytes());
        byte[] all = chain.writtenContent();
        assertEquals(VirtioBlk.S_UNSUPP, all[all.length - 1]);
        for (int i = 0; i < all.length - 1; i++) {
            assertEquals(0, all[i]);
        }
    }
}
