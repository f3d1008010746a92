package io.kickplug.blk.device;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.fake.FakeChain;
import io.kickplug.blk.fake.Headers;
import io.kickplug.blk.fake.RecordingBackend;
import java.util.Random;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.constraints.IntRange;

/** Whatever the guest puts in a chain, the device answers with a valid status or reports a guest fault. */
class RequestProcessorPropertyTest {

    @Provide
    Arbitrary<Integer> types() {
        return Arbitraries.oneOf(Arbitraries.of(VirtioBlk.T_IN, VirtioBlk.T_OUT, VirtioBlk.T_FLUSH,
                VirtioBlk.T_GET_ID, 5, 9), Arbitraries.integers());
    }

    @Provide
    Arbitrary<Long> sectors() {
        return Arbitraries.oneOf(Arbitraries.longs().between(0, 40), Arbitraries.longs(),
                Arbitraries.of(-1L, Long.MIN_VALUE, Long.MAX_VALUE));
    }

    @Property(tries = 500)
    void everyChainGetsAStatusOrAFault(@ForAll("types") int type, @ForAll("sectors") long sector,
            @ForAll @IntRange(min = 0, max = 20) int headerBytes, @ForAll @IntRange(min = 0, max = 1100) int readData,
            @ForAll @IntRange(min = 0, max = 1100) int writable, @ForAll boolean readOnly, @ForAll long seed) {
        Random random = new Random(seed);
        RecordingBackend backend = new RecordingBackend(new MemoryBackend(32 * 512, false));
        BlkStats stats = new BlkStats();
        RequestProcessor processor = new RequestProcessor("p", backend, readOnly, new byte[] {'s'}, stats,
                BlkMode.negotiated(VirtioBlk.F_FLUSH));
        byte[] header = Headers.header(type, sector);
        byte[] readable = Headers.concat(java.util.Arrays.copyOf(header, Math.min(headerBytes, 16)),
                new byte[Math.max(0, headerBytes - 16) + readData]);
        FakeChain.Builder builder = FakeChain.builder();
        int cut = random.nextInt(readable.length + 1);
        builder.readable(Headers.part(readable, 0, cut)).readable(Headers.part(readable, cut, readable.length));
        int wcut = random.nextInt(writable + 1);
        FakeChain chain = builder.writable(wcut).writable(writable - wcut).build();

        int used;
        try {
            used = InlineServe.serve(processor, chain);
        } catch (GuestFaultException fault) {
            // 5.2.6: only a missing header or status byte is a fault.
            assertTrue(readable.length < 16 || writable == 0, fault.getMessage());
            assertEquals(0, stats.requestsInFlight());
            return;
        }
        assertTrue(readable.length >= 16 && writable >= 1);
        int status = chain.lastWritableByte();
        assertTrue(status == VirtioBlk.S_OK || status == VirtioBlk.S_IOERR || status == VirtioBlk.S_UNSUPP,
                "status " + status);
        // 2.7.8.2: the used length never overstates what the device wrote.
        assertTrue(used >= 1 && used <= writable, "used " + used + " of " + writable);
        if (readOnly) {
            assertEquals(0, backend.writes.get(), "5.2.6.2: a read-only device never writes");
        }
        assertEquals(1, stats.requestsCompleted());
        assertEquals(0, stats.requestsInFlight());
    }
}
