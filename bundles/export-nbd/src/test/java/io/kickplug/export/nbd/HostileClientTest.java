package io.kickplug.export.nbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The server against a hand-written client that breaks the rules of proto.md on purpose: each test names the rule.
 * The server answers with the error the spec asks for, or drops the connection where the spec allows it, and stays
 * up for the next client.
 */
class HostileClientTest {

    private static final long SIZE = 4 << 20;
    private Served served;

    @BeforeEach
    void serve() throws Exception {
        served = new Served().memory("d0", SIZE).readOnly("ro", SIZE);
    }

    @AfterEach
    void close() throws Exception {
        served.close();
    }

    private RawClient client() throws Exception {
        return new RawClient(served.socket);
    }

    private static byte[] pattern(int n, int seed) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) (seed * 31 + i);
        }
        return b;
    }

    /** The server still serves: a fresh client writes and reads back. */
    private void stillServes() throws Exception {
        try (RawClient c = client().hello()) {
            c.go("d0", true);
            c.request(0, Nbd.CMD_READ, 99, 0, 512, null);
            RawClient.Reply r = c.reply(0);
            assertEquals(99, r.cookie());
            assertEquals(0, r.errno());
        }
    }

    // "Newstyle negotiation": the server MUST close the connection if it does not recognise the client's flags.
    @Test
    void unknownClientFlagsCloseTheConnection() throws Exception {
        try (RawClient c = client().hello(1 << 5)) {
            assertTrue(c.closedByServer());
        }
        stillServes();
    }

    // "Newstyle negotiation": every option starts with IHAVEOPT; a bad magic leaves the stream out of step.
    @Test
    void anOptionWithABadMagicClosesTheConnection() throws Exception {
        try (RawClient c = client().hello()) {
            c.option(0x1122334455667788L, Nbd.OPT_GO, 0, new byte[0]);
            assertTrue(c.closedByServer());
        }
        stillServes();
    }

    // "Fixed newstyle negotiation": an option the server does not know is answered NBD_REP_ERR_UNSUP, its data
    // skipped; the negotiation goes on.
    @Test
    void anUnknownOptionIsAnsweredUnsupAndTheNegotiationGoesOn() throws Exception {
        try (RawClient c = client().hello()) {
            c.option(0x4242, pattern(300, 1));
            RawClient.OptionReply r = c.optionReply();
            assertEquals(0x4242, r.option());
            assertEquals(Nbd.REP_ERR_UNSUP, r.type());
            c.option(10, new byte[] {0, 0, 0, 0}); // NBD_OPT_SET_META_CONTEXT: not offered
            assertEquals(Nbd.REP_ERR_UNSUP, c.optionReply().type());
            assertTrue(c.go("d0", false) >= 0);
        }
    }

    // "Termination of the session during option haggling": a client that sends an option of more data than any
    // option needs is taken as a denial of service; nothing of that length is read into memory.
    @Test
    void anOversizeOptionClosesTheConnectionWithoutReadingIt() throws Exception {
        try (RawClient c = client().hello()) {
            c.option(Nbd.IHAVEOPT, Nbd.OPT_GO, 0x7fffffff, new byte[0]);
            assertTrue(c.closedByServer());
        }
        stillServes();
    }

    // "NOTLS mode": NBD_OPT_STARTTLS is answered NBD_REP_ERR_POLICY.
    @Test
    void tlsIsRefusedByPolicy() throws Exception {
        try (RawClient c = client().hello()) {
            c.option(Nbd.OPT_STARTTLS, new byte[0]);
            assertEquals(Nbd.REP_ERR_POLICY, c.optionReply().type());
        }
    }

    // NBD_OPT_LIST: one NBD_REP_SERVER per export, then NBD_REP_ACK; with data, NBD_REP_ERR_INVALID.
    @Test
    void listNamesEveryExportAndRefusesData() throws Exception {
        try (RawClient c = client().hello()) {
            c.option(Nbd.OPT_LIST, new byte[0]);
            Set<String> names = new HashSet<>();
            RawClient.OptionReply r;
            while ((r = c.optionReply()).type() == Nbd.REP_SERVER) {
                ByteBuffer b = r.buffer();
                byte[] name = new byte[b.getInt()];
                b.get(name);
                names.add(new String(name, StandardCharsets.UTF_8));
            }
            assertEquals(Nbd.REP_ACK, r.type());
            assertEquals(Set.of("d0", "ro"), names);
            c.option(Nbd.OPT_LIST, new byte[] {1});
            assertEquals(Nbd.REP_ERR_INVALID, c.optionReply().type());
        }
    }

    // NBD_OPT_INFO: NBD_INFO_EXPORT (size, flags) and NBD_INFO_BLOCK_SIZE (512, 4096, 32 MiB), then ACK, and the
    // negotiation goes on; an unknown name is NBD_REP_ERR_UNKNOWN; a name length past the data NBD_REP_ERR_INVALID.
    @Test
    void infoDescribesTheExportWithoutEnteringTransmission() throws Exception {
        try (RawClient c = client().hello()) {
            c.option(Nbd.OPT_INFO, RawClient.goData("ro", Nbd.INFO_BLOCK_SIZE));
            long size = -1;
            int flags = -1;
            int[] sizes = null;
            RawClient.OptionReply r;
            while ((r = c.optionReply()).type() == Nbd.REP_INFO) {
                ByteBuffer b = r.buffer();
                int info = b.getShort();
                if (info == Nbd.INFO_EXPORT) {
                    assertEquals(12, r.data().length);
                    size = b.getLong();
                    flags = Short.toUnsignedInt(b.getShort());
                } else if (info == Nbd.INFO_BLOCK_SIZE) {
                    assertEquals(14, r.data().length);
                    sizes = new int[] {b.getInt(), b.getInt(), b.getInt()};
                }
            }
            assertEquals(Nbd.REP_ACK, r.type());
            assertEquals(SIZE, size);
            assertTrue((flags & Nbd.FLAG_HAS_FLAGS) != 0 && (flags & Nbd.FLAG_READ_ONLY) != 0, "flags " + flags);
            assertEquals(0, flags & (Nbd.FLAG_SEND_TRIM | Nbd.FLAG_SEND_WRITE_ZEROES), "no write features read-only");
            assertArrayEquals(new int[] {512, 4096, 32 << 20}, sizes);
            c.option(Nbd.OPT_INFO, RawClient.goData("nope"));
            assertEquals(Nbd.REP_ERR_UNKNOWN, c.optionReply().type());
            c.option(Nbd.OPT_GO, new byte[] {0, 0, 0x10, 0, 'a', 0, 0});
            assertEquals(Nbd.REP_ERR_INVALID, c.optionReply().type());
            assertTrue(c.go("d0", true) >= 0, "still negotiating: GO works");
        }
    }

    // NBD_OPT_ABORT: the server MUST reply with NBD_REP_ACK (then the client drops the connection).
    @Test
    void abortIsAcknowledged() throws Exception {
        try (RawClient c = client().hello()) {
            c.option(Nbd.OPT_ABORT, new byte[0]);
            assertEquals(Nbd.REP_ACK, c.optionReply().type());
            assertTrue(c.closedByServer());
        }
    }

    // NBD_OPT_EXPORT_NAME (old clients): size, flags and 124 zeroes unless NO_ZEROES; an unknown name ends the
    // session, as the server cannot send an error.
    @Test
    void exportNameServesOldClientsAndClosesOnAnUnknownName() throws Exception {
        try (RawClient c = client().hello(Nbd.FLAG_C_FIXED_NEWSTYLE)) {
            c.option(Nbd.OPT_EXPORT_NAME, "d0".getBytes(StandardCharsets.UTF_8));
            ByteBuffer b = c.read(10 + 124);
            assertEquals(SIZE, b.getLong());
            int flags = Short.toUnsignedInt(b.getShort());
            assertTrue((flags & Nbd.FLAG_SEND_FLUSH) != 0 && (flags & Nbd.FLAG_SEND_FUA) != 0);
            while (b.hasRemaining()) {
                assertEquals(0, b.get());
            }
            c.request(0, Nbd.CMD_READ, 7, 512, 512, null);
            RawClient.Reply r = c.reply(512);
            assertFalse(r.structured(), "simple replies without NBD_OPT_STRUCTURED_REPLY");
            assertEquals(0, r.error());
            assertEquals(512, r.payload().length);
        }
        try (RawClient c = client().hello()) {
            c.option(Nbd.OPT_EXPORT_NAME, "nope".getBytes(StandardCharsets.UTF_8));
            assertTrue(c.closedByServer());
        }
    }

    // "Request message": a request with a bad magic leaves the stream out of step: hard disconnect.
    @Test
    void aRequestWithABadMagicClosesTheConnection() throws Exception {
        try (RawClient c = client().hello()) {
            c.go("d0", true);
            ByteBuffer b = ByteBuffer.allocate(28).putInt(0x12560953).putShort((short) 0).putShort((short) 0)
                    .putLong(1).putLong(0).putInt(512);
            c.write(b.flip());
            assertTrue(c.closedByServer());
        }
        stillServes();
    }

    // "Size constraints": a WRITE longer than the maximum payload (past 2^25 bytes) may be deemed a denial of service:
    // the connection closes, and nothing of that length is allocated.
    @Test
    void anOversizeWriteClosesTheConnection() throws Exception {
        try (RawClient c = client().hello()) {
            c.go("d0", true);
            c.request(0, Nbd.CMD_WRITE, 1, 0, 0xfffffe00, null);
            assertTrue(c.closedByServer());
        }
        stillServes();
    }

    // NBD_CMD_READ past the maximum payload: EOVERFLOW with structured replies, EINVAL with simple ones.
    @Test
    void anOversizeReadIsRefused() throws Exception {
        try (RawClient c = client().hello()) {
            c.go("d0", true);
            c.request(0, Nbd.CMD_READ, 2, 0, (32 << 20) + 512, null);
            RawClient.Reply r = c.reply(0);
            assertTrue(r.structured(), "a READ always gets a structured reply once negotiated");
            assertEquals(Nbd.REPLY_TYPE_ERROR, r.type());
            assertEquals(Nbd.EOVERFLOW, r.errno());
        }
        try (RawClient c = client().hello()) {
            c.go("d0", false);
            c.request(0, Nbd.CMD_READ, 3, 0, (32 << 20) + 512, null);
            assertEquals(Nbd.EINVAL, c.reply(0).errno());
        }
    }

    // "Error values": EINVAL for a read past the end, ENOSPC for a write past the end (its payload is read and
    // dropped: the next request is still in step), EINVAL for an offset with its top bit set (unsigned).
    @Test
    void requestsPastTheEndAreRefusedAndTheStreamStaysInStep() throws Exception {
        try (RawClient c = client().hello()) {
            c.go("d0", false);
            c.request(0, Nbd.CMD_READ, 1, SIZE, 512, null);
            assertEquals(Nbd.EINVAL, c.reply(512).errno());
            c.request(0, Nbd.CMD_WRITE, 2, SIZE - 512, 1024, pattern(1024, 2));
            assertEquals(Nbd.ENOSPC, c.reply(0).errno());
            c.request(0, Nbd.CMD_READ, 3, 0x8000000000000000L, 512, null);
            assertEquals(Nbd.EINVAL, c.reply(512).errno());
            c.request(0, Nbd.CMD_READ, 4, -512, 1024, null); // offset + length wraps around 2^64
            assertEquals(Nbd.EINVAL, c.reply(512).errno());
            c.request(0, Nbd.CMD_READ, 5, 0, 512, null);
            RawClient.Reply ok = c.reply(512);
            assertEquals(5, ok.cookie());
            assertEquals(0, ok.errno());
        }
    }

    // NBD_CMD_READ of length 0: "the server SHOULD NOT disconnect": a structured NBD_REPLY_TYPE_NONE chunk, done.
    @Test
    void aReadOfLengthZeroSucceedsWithoutData() throws Exception {
        try (RawClient c = client().hello()) {
            c.go("d0", true);
            c.request(0, Nbd.CMD_READ, 11, 4096, 0, null);
            RawClient.Reply r = c.reply(0);
            assertEquals(11, r.cookie());
            assertEquals(Nbd.REPLY_TYPE_NONE, r.type());
            assertTrue(r.done());
            assertEquals(0, r.payload().length);
        }
        try (RawClient c = client().hello()) {
            c.go("d0", false);
            c.request(0, Nbd.CMD_READ, 12, 4096, 0, null);
            RawClient.Reply r = c.reply(0);
            assertEquals(0, r.error());
            c.request(0, Nbd.CMD_READ, 13, 0, 512, null);
            assertEquals(13, c.reply(512).cookie(), "no stray data after the empty read");
        }
    }

    // "Error values": "SHOULD return NBD_EPERM if it receives a write or trim request on a read-only export".
    @Test
    void writesTrimsAndZeroesOnAReadOnlyExportAreEperm() throws Exception {
        try (RawClient c = client().hello()) {
            int flags = c.go("ro", true);
            assertTrue((flags & Nbd.FLAG_READ_ONLY) != 0);
            c.request(0, Nbd.CMD_TRIM, 1, 0, 4096, null);
            assertEquals(Nbd.EPERM, c.reply(0).errno());
            c.request(0, Nbd.CMD_WRITE, 2, 0, 512, pattern(512, 3));
            assertEquals(Nbd.EPERM, c.reply(0).errno());
            c.request(Nbd.CMD_FLAG_NO_HOLE, Nbd.CMD_WRITE_ZEROES, 3, 0, 512, null);
            assertEquals(Nbd.EPERM, c.reply(0).errno());
            c.request(0, Nbd.CMD_READ, 4, 0, 512, null);
            RawClient.Reply r = c.reply(0);
            assertEquals(4, r.cookie());
            assertArrayEquals(new byte[8 + 512], r.payload(), "the refused write did not land (offset + zeroes)");
        }
    }

    // "Error values": "SHOULD return NBD_EINVAL if it receives an unknown command flag" (or one not valid for the
    // command); the WRITE's payload is dropped and the next request is in step. Unknown commands: EINVAL too.
    @Test
    void unknownFlagsAndCommandsAreEinval() throws Exception {
        try (RawClient c = client().hello()) {
            c.go("d0", true);
            c.request(1 << 7, Nbd.CMD_WRITE, 1, 0, 1024, pattern(1024, 4));
            assertEquals(Nbd.EINVAL, c.reply(0).errno());
            c.request(Nbd.CMD_FLAG_NO_HOLE, Nbd.CMD_WRITE, 2, 0, 512, pattern(512, 5));
            assertEquals(Nbd.EINVAL, c.reply(0).errno(), "NO_HOLE is for WRITE_ZEROES only");
            c.request(1 << 2, Nbd.CMD_READ, 3, 0, 512, null);
            assertEquals(Nbd.EINVAL, c.reply(0).errno(), "DF without NBD_FLAG_SEND_DF");
            c.request(0, 5, 4, 0, 512, null);
            assertEquals(Nbd.EINVAL, c.reply(0).errno(), "NBD_CMD_CACHE is not offered");
            c.request(0, 0x4000, 5, 0, 512, null);
            assertEquals(Nbd.EINVAL, c.reply(0).errno());
            c.request(0, Nbd.CMD_FLUSH, 6, 512, 0, null);
            assertEquals(Nbd.EINVAL, c.reply(0).errno(), "FLUSH: offset and length MUST be zero");
            c.request(0, Nbd.CMD_READ, 7, 100, 512, null);
            assertEquals(Nbd.EINVAL, c.reply(0).errno(), "not aligned to the minimum block size");
            c.request(0, Nbd.CMD_READ, 8, 0, 1024, null);
            RawClient.Reply r = c.reply(0);
            assertEquals(8, r.cookie());
            assertArrayEquals(new byte[8 + 1024], r.payload(), "none of the refused writes landed");
        }
    }

    // "Transmission": many requests in flight, replies matched by cookie; FUA writes, FLUSH, TRIM and WRITE_ZEROES.
    @Test
    void manyRequestsInFlightAreAllAnsweredByCookie() throws Exception {
        try (RawClient c = client().hello()) {
            int flags = c.go("d0", true);
            assertTrue((flags & Nbd.FLAG_SEND_TRIM) != 0 && (flags & Nbd.FLAG_SEND_WRITE_ZEROES) != 0
                    && (flags & Nbd.FLAG_CAN_MULTI_CONN) != 0, "flags " + flags);
            int n = 200;
            for (int i = 0; i < n; i++) {
                c.request(i % 3 == 0 ? Nbd.CMD_FLAG_FUA : 0, Nbd.CMD_WRITE, 1000 + i, i * 4096L, 4096,
                        pattern(4096, i));
            }
            Set<Long> cookies = new HashSet<>();
            for (int i = 0; i < n; i++) {
                RawClient.Reply r = c.reply(0);
                assertEquals(0, r.errno());
                assertTrue(cookies.add(r.cookie()), "one reply per request");
            }
            c.request(0, Nbd.CMD_FLUSH, 1, 0, 0, null);
            assertEquals(0, c.reply(0).errno());
            for (int i = 0; i < n; i++) {
                c.request(0, Nbd.CMD_READ, i, i * 4096L, 4096, null);
            }
            for (int i = 0; i < n; i++) {
                RawClient.Reply r = c.reply(0);
                assertEquals(Nbd.REPLY_TYPE_OFFSET_DATA, r.type());
                ByteBuffer p = ByteBuffer.wrap(r.payload());
                assertEquals(r.cookie() * 4096, p.getLong(), "the chunk's offset is the request's");
                assertArrayEquals(pattern(4096, (int) r.cookie()), Arrays.copyOfRange(r.payload(), 8, 8 + 4096));
            }
            c.request(0, Nbd.CMD_TRIM, 2, 0, 4096, null);
            assertEquals(0, c.reply(0).errno());
            c.request(Nbd.CMD_FLAG_NO_HOLE | Nbd.CMD_FLAG_FUA, Nbd.CMD_WRITE_ZEROES, 3, 4096, 4096, null);
            assertEquals(0, c.reply(0).errno());
            c.request(0, Nbd.CMD_READ, 4, 4096, 4096, null);
            assertArrayEquals(new byte[8 + 4096], zeroOffset(c.reply(0).payload()), "write-zeroes zeroed");
        }
    }

    private static byte[] zeroOffset(byte[] chunk) {
        byte[] copy = chunk.clone();
        Arrays.fill(copy, 0, 8, (byte) 0);
        return copy;
    }

    // "Terminating the transmission phase": a client that drops the connection in the middle of a WRITE's payload
    // loses that write only; what other clients wrote stays, and the server goes on.
    @Test
    void aClientThatDisconnectsMidWriteLosesNothingOfOthers() throws Exception {
        byte[] a = pattern(8192, 7);
        try (RawClient c = client().hello()) {
            c.go("d0", true);
            c.request(0, Nbd.CMD_WRITE, 1, 0, a.length, a);
            assertEquals(0, c.reply(0).errno());
        }
        try (RawClient b = client().hello()) {
            b.go("d0", true);
            b.request(0, Nbd.CMD_WRITE, 2, 0, 8192, Arrays.copyOf(pattern(8192, 8), 3000)); // 3000 of 8192 bytes
        }
        try (RawClient c = client().hello()) {
            c.go("d0", true);
            c.request(0, Nbd.CMD_READ, 3, 0, a.length, null);
            RawClient.Reply r = c.reply(0);
            assertArrayEquals(a, Arrays.copyOfRange(r.payload(), 8, 8 + a.length), "the partial write never landed");
        }
    }

    // NBD_CMD_DISC: "The server MUST handle all outstanding requests" and close; no reply to the DISC itself.
    @Test
    void disconnectAnswersWhatIsInFlightThenCloses() throws Exception {
        try (RawClient c = client().hello()) {
            c.go("d0", true);
            for (int i = 0; i < 32; i++) {
                c.request(0, Nbd.CMD_WRITE, i, i * 512L, 512, pattern(512, i));
            }
            c.request(0, Nbd.CMD_DISC, 99, 0, 0, null);
            for (int i = 0; i < 32; i++) {
                assertEquals(0, c.reply(0).errno());
            }
            assertTrue(c.closedByServer());
        }
    }
}
