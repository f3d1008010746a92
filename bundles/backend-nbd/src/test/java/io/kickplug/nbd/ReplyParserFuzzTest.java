package io.kickplug.nbd;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.kickplug.api.blk.BackendIo.Op;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.ReadableByteChannel;
import java.io.ByteArrayInputStream;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes {@link ReplyReader} with reply streams made of valid chunks, mutated chunks and random bytes: whatever the
 * server sends, the reader either handles it or throws an {@link IOException} (never another exception), completes a
 * command at most once and only a command in flight, writes only inside the command's buffer, and completes a read
 * successfully only when its chunks covered it exactly. Count: {@code -Dkickplug.nbd.fuzz.tries=N} (CI: 3,000).
 */
class ReplyParserFuzzTest {

    private static final int TRIES = Integer.getInteger("kickplug.nbd.fuzz.tries", 3000);
    private static final int MAX_PAYLOAD = 64 * 1024;

    /** A table of commands in flight; records completions. */
    static final class Table implements ReplyReader.Table {
        final Map<Long, Command> inFlight = new HashMap<>();
        final Map<Long, Integer> completions = new HashMap<>();
        int successes;

        @Override
        public Command lookup(long cookie) {
            return inFlight.get(cookie);
        }

        @Override
        public void done(Command c, IOException error) {
            assertTrue(inFlight.remove(c.cookie) == c, "done only for a command in flight");
            completions.merge(c.cookie, 1, Integer::sum);
            if (error == null) {
                successes++;
                if (c.type == Nbd.CMD_READ) {
                    assertEquals(c.length, c.received, "a successful read covered its range exactly");
                }
            }
        }
    }

    @Test
    void anyReplyStreamIsHandledOrRefusedWithAnIoException() throws Exception {
        Random random = new Random(Long.getLong("kickplug.nbd.fuzz.seed", 19));
        int refused = 0;
        int completedOk = 0;
        for (int t = 0; t < TRIES; t++) {
            Table table = new Table();
            boolean structured = random.nextInt(5) != 0;
            long[] cookies = new long[1 + random.nextInt(4)];
            for (int i = 0; i < cookies.length; i++) {
                Command c = new Command();
                int type = random.nextInt(3) == 0 ? Nbd.CMD_WRITE : Nbd.CMD_READ;
                int length = 512 * (1 + random.nextInt(16));
                long offset = 512L * random.nextInt(1024);
                TestIo io = type == Nbd.CMD_READ ? TestIo.read(offset, length) : TestIo.write(offset, new byte[length]);
                c.reset(io, type, 0, offset, length);
                c.cookie = ((long) (i + 1) << 32) | i;
                cookies[i] = c.cookie;
                table.inFlight.put(c.cookie, c);
            }
            byte[] stream = stream(random, table, structured);
            ReadableByteChannel channel = Channels.newChannel(new ByteArrayInputStream(stream));
            ReplyReader reader = new ReplyReader(channel, structured, MAX_PAYLOAD, "fuzz", table);
            try {
                for (int i = 0; i < 64; i++) {
                    reader.readOne();
                }
            } catch (NbdProtocolException expected) {
                refused++;
            } catch (IOException endOfStream) {
                // the stream ended (every stream does): EOF, a truncated reply
            } catch (RuntimeException e) {
                fail("try " + t + ": the reader threw " + e + " instead of an IOException", e);
            }
            for (Integer n : table.completions.values()) {
                assertEquals(1, n, "completed at most once");
            }
            completedOk += table.successes;
        }
        System.out.println("NBD reply fuzz: " + TRIES + " streams, " + refused + " refused as malformed (the rest ended at the stream's end), "
                + completedOk + " commands completed successfully");
        assertTrue(completedOk > TRIES / 10, "the generator reaches successful completions: " + completedOk);
        assertTrue(refused > TRIES / 10, "and malformed replies: " + refused);
    }

    /** A stream of replies to the table's commands: valid ones, mutated ones, or noise. */
    private static byte[] stream(Random random, Table table, boolean structured) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        for (Command c : table.inFlight.values().toArray(new Command[0])) {
            byte[] reply = structured && random.nextInt(4) != 0 ? structuredReply(random, c) : simpleReply(random, c);
            int mutation = random.nextInt(10);
            if (mutation == 0 && reply.length > 0) {
                reply[random.nextInt(reply.length)] ^= (byte) (1 << random.nextInt(8)); // a bit flip
            } else if (mutation == 1 && reply.length > 1) {
                reply = java.util.Arrays.copyOf(reply, random.nextInt(reply.length)); // truncated
            } else if (mutation == 2) {
                byte[] noise = new byte[random.nextInt(64)];
                random.nextBytes(noise);
                out.writeBytes(noise);
            } else if (mutation == 3 && reply.length >= 20) {
                ByteBuffer.wrap(reply).putInt(16, random.nextInt()); // a random chunk length
            } else if (mutation == 4 && reply.length >= 16) {
                ByteBuffer.wrap(reply).putLong(8, random.nextLong()); // a random cookie
            }
            out.writeBytes(reply);
        }
        return out.toByteArray();
    }

    private static byte[] simpleReply(Random random, Command c) {
        int error = random.nextInt(6) == 0 ? 5 : 0;
        ByteBuffer b = ByteBuffer.allocate(16 + (c.type == Nbd.CMD_READ && error == 0 ? c.length : 0));
        b.putInt(Nbd.SIMPLE_REPLY_MAGIC).putInt(error).putLong(c.cookie);
        return b.array();
    }

    /** The chunks of one structured reply: data and holes covering the read (in random pieces), or an error, or NONE. */
    private static byte[] structuredReply(Random random, Command c) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        if (c.type != Nbd.CMD_READ || random.nextInt(8) == 0) {
            if (random.nextInt(3) == 0) {
                byte[] message = "no way".getBytes();
                ByteBuffer e = ByteBuffer.allocate(20 + 6 + message.length);
                e.putInt(Nbd.STRUCTURED_REPLY_MAGIC).putShort((short) Nbd.REPLY_FLAG_DONE)
                        .putShort((short) Nbd.REPLY_TYPE_ERROR).putLong(c.cookie).putInt(6 + message.length)
                        .putInt(5).putShort((short) message.length).put(message);
                return e.array();
            }
            return HostileNbdServer.chunkHeader(Nbd.REPLY_FLAG_DONE, Nbd.REPLY_TYPE_NONE, c.cookie, 0).array();
        }
        int at = 0;
        while (at < c.length) {
            int n = Math.min(c.length - at, 512 * (1 + random.nextInt(4)));
            boolean last = at + n == c.length;
            int flags = last ? Nbd.REPLY_FLAG_DONE : 0;
            if (random.nextBoolean()) {
                ByteBuffer h = ByteBuffer.allocate(20 + 8 + n);
                h.put(HostileNbdServer.chunkHeader(flags, Nbd.REPLY_TYPE_OFFSET_DATA, c.cookie, 8 + n))
                        .putLong(c.offset + at);
                out.writeBytes(h.array());
            } else {
                ByteBuffer h = ByteBuffer.allocate(20 + 12);
                h.put(HostileNbdServer.chunkHeader(flags, Nbd.REPLY_TYPE_OFFSET_HOLE, c.cookie, 12))
                        .putLong(c.offset + at).putInt(n);
                out.writeBytes(h.array());
            }
            at += n;
        }
        return out.toByteArray();
    }

    @Test
    void theZeroHoleAndDataLandWhereTheyBelong() throws Exception {
        Table table = new Table();
        Command c = new Command();
        TestIo io = TestIo.read(4096, 1024);
        c.reset(io, Nbd.CMD_READ, 0, 4096, 1024);
        c.cookie = 99;
        table.inFlight.put(99L, c);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        out.writeBytes(HostileNbdServer.chunkHeader(0, Nbd.REPLY_TYPE_OFFSET_HOLE, 99, 12).array());
        out.writeBytes(ByteBuffer.allocate(12).putLong(4096 + 512).putInt(512).array());
        byte[] data = new byte[512];
        java.util.Arrays.fill(data, (byte) 3);
        out.writeBytes(HostileNbdServer.chunkHeader(Nbd.REPLY_FLAG_DONE, Nbd.REPLY_TYPE_OFFSET_DATA, 99, 520).array());
        out.writeBytes(ByteBuffer.allocate(520).putLong(4096).put(data).array());
        ReplyReader reader = new ReplyReader(Channels.newChannel(new ByteArrayInputStream(out.toByteArray())), true,
                MAX_PAYLOAD, "t", table);
        // Pre-fill with 9s so that the hole's zeroes show.
        for (int i = 0; i < 1024; i++) {
            io.buffers()[0].put(i, (byte) 9);
        }
        reader.readOne();
        reader.readOne();
        assertEquals(1, table.successes);
        byte[] got = io.data();
        for (int i = 0; i < 512; i++) {
            assertEquals(3, got[i]);
            assertEquals(0, got[512 + i]);
        }
    }
}
