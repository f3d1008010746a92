package io.kickplug.export.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes the request parser ({@link Request#read} then {@link RequestCheck#check}) with headers made of random and
 * boundary values, and a live connection with random byte streams. Whatever a client sends, a header is either refused
 * (an error value or a close) or accepted only when every rule of proto.md holds; the server survives every stream and
 * goes on serving. Count: {@code -Dkickplug.nbd.fuzz.tries=N} (default 20,000 headers, a 50th of that as streams).
 */
class RequestParserFuzzTest {

    private static final int TRIES = Integer.getInteger("kickplug.nbd.fuzz.tries", 20_000);
    private static final long[] OFFSETS = {0, 512, 4096, 511, -1, -512, Long.MIN_VALUE, Long.MAX_VALUE, 1L << 20,
        (4L << 20) - 512, 4L << 20, (4L << 20) + 512};
    private static final int[] LENGTHS = {0, 1, 512, 4096, 0xffffffff, 0x80000000, Nbd.MAX_PAYLOAD,
        Nbd.MAX_PAYLOAD + 512, 4 << 20, (4 << 20) + 512};

    private static long pick(Random r, long[] values) {
        return r.nextInt(3) == 0 ? r.nextLong() : values[r.nextInt(values.length)];
    }

    @Test
    void anyHeaderIsRefusedOrObeysEveryRule() {
        Random random = new Random(Long.getLong("kickplug.nbd.fuzz.seed", 4));
        long size = 4L << 20;
        int accepted = 0;
        int closed = 0;
        for (int t = 0; t < TRIES; t++) {
            ByteBuffer b = ByteBuffer.allocate(Nbd.REQUEST_BYTES);
            b.putInt(random.nextInt(8) == 0 ? random.nextInt() : Nbd.REQUEST_MAGIC);
            b.putShort((short) (random.nextInt(3) == 0 ? random.nextInt() : random.nextInt(4)));
            b.putShort((short) (random.nextInt(4) == 0 ? random.nextInt() : random.nextInt(8)));
            b.putLong(random.nextLong());
            b.putLong(pick(random, OFFSETS));
            b.putInt(random.nextInt(3) == 0 ? random.nextInt() : LENGTHS[random.nextInt(LENGTHS.length)]);
            Request r = Request.read(b.flip());
            assertEquals(Nbd.REQUEST_BYTES, b.position(), "a header is 28 bytes");
            boolean readOnly = random.nextBoolean();
            int flags = Nbd.FLAG_HAS_FLAGS | Nbd.FLAG_SEND_FLUSH | Nbd.FLAG_SEND_FUA
                    | (readOnly ? Nbd.FLAG_READ_ONLY : (random.nextBoolean() ? Nbd.FLAG_SEND_TRIM : 0)
                            | (random.nextBoolean() ? Nbd.FLAG_SEND_WRITE_ZEROES : 0));
            RequestCheck.Limits limits = new RequestCheck.Limits(size, readOnly, flags, random.nextBoolean());
            int verdict = RequestCheck.check(r, limits);
            if (verdict == RequestCheck.CLOSE) {
                closed++;
                assertTrue(r.magic() != Nbd.REQUEST_MAGIC || r.type() == Nbd.CMD_WRITE
                        && r.lengthBytes() > Nbd.MAX_PAYLOAD, "close only for a bad magic or an oversize write: " + r);
                continue;
            }
            assertEquals(Nbd.REQUEST_MAGIC, r.magic(), "a bad magic is never answered");
            if (verdict != 0) {
                assertTrue(verdict == Nbd.EINVAL || verdict == Nbd.EPERM || verdict == Nbd.ENOSPC
                        || verdict == Nbd.EOVERFLOW, "an error value of proto.md: " + verdict);
                continue;
            }
            accepted++;
            int type = r.type();
            assertTrue(type == Nbd.CMD_READ || type == Nbd.CMD_WRITE || type == Nbd.CMD_FLUSH || type == Nbd.CMD_TRIM
                    || type == Nbd.CMD_WRITE_ZEROES || type == Nbd.CMD_DISC, "a known command: " + r);
            if (type == Nbd.CMD_DISC) {
                continue;
            }
            int allowed = Nbd.CMD_FLAG_FUA | (type == Nbd.CMD_WRITE_ZEROES ? Nbd.CMD_FLAG_NO_HOLE : 0);
            assertEquals(0, r.flags() & ~allowed, "only flags of the command: " + r);
            if (type == Nbd.CMD_FLUSH) {
                assertEquals(0, r.offset());
                assertEquals(0, r.length());
                continue;
            }
            assertTrue(!readOnly || type == Nbd.CMD_READ, "no write on a read-only export: " + r);
            assertTrue(type != Nbd.CMD_TRIM || (flags & Nbd.FLAG_SEND_TRIM) != 0);
            assertTrue(type != Nbd.CMD_WRITE_ZEROES || (flags & Nbd.FLAG_SEND_WRITE_ZEROES) != 0);
            assertTrue(r.offset() >= 0 && r.offset() % 512 == 0 && r.lengthBytes() % 512 == 0, "aligned: " + r);
            assertTrue(r.offset() + r.lengthBytes() <= size, "inside the export: " + r);
            assertTrue(type != Nbd.CMD_READ && type != Nbd.CMD_WRITE || r.lengthBytes() <= Nbd.MAX_PAYLOAD,
                    "a data request within the maximum payload: " + r);
        }
        assertTrue(accepted > TRIES / 50, "the fuzzer reached the accepting paths: " + accepted);
        assertTrue(closed > 0);
    }

    /** Random streams after a valid negotiation: the server never dies, and serves the next client. */
    @Test
    void randomRequestStreamsNeverBreakTheServer() throws Exception {
        Random random = new Random(Long.getLong("kickplug.nbd.fuzz.seed", 5));
        try (Served served = new Served().memory("d0", 4 << 20)) {
            for (int t = 0; t < Math.max(1, TRIES / 50); t++) {
                try (RawClient c = new RawClient(served.socket).hello()) {
                    c.go("d0", random.nextBoolean());
                    ByteBuffer b = ByteBuffer.allocate(4096);
                    while (b.remaining() >= Nbd.REQUEST_BYTES) {
                        if (random.nextInt(4) == 0) {
                            byte[] junk = new byte[random.nextInt(40)];
                            random.nextBytes(junk);
                            b.put(junk, 0, Math.min(junk.length, b.remaining()));
                            continue;
                        }
                        int type = random.nextInt(8);
                        int len = 512 * random.nextInt(4);
                        b.putInt(Nbd.REQUEST_MAGIC).putShort((short) random.nextInt(4)).putShort((short) type)
                                .putLong(t).putLong(512L * random.nextInt(10000)).putInt(len);
                        if (type == Nbd.CMD_WRITE) {
                            b.position(Math.min(b.limit(), b.position() + len)); // payload (zeroes), maybe cut
                        }
                    }
                    try {
                        c.write(b.flip());
                    } catch (java.io.IOException closedMeanwhile) {
                        // the server dropped the connection (a bad magic): allowed
                    }
                }
            }
            try (RawClient c = new RawClient(served.socket).hello()) {
                c.go("d0", true);
                c.request(0, Nbd.CMD_READ, 1, 0, 512, null);
                assertEquals(0, c.reply(0).errno());
            }
        }
    }
}
