package io.kickplug.nbd;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ReadableByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * Reads transmission replies from a connection, one chunk at a time (proto.md "Simple reply message" and "Structured
 * reply chunk message"), and hands each finished command to its {@link Table}. Everything the server sends is
 * checked before it is used: magic, a cookie of a command in flight, a chunk type allowed for that command, lengths
 * bounded by the command and the negotiated payload limit, data offsets inside the command's range, and a read that
 * ends without error covered exactly its range. A violation is an {@link NbdProtocolException}; the caller then ends
 * the connection. Data goes straight from a scratch buffer into the command's buffers.
 */
final class ReplyReader {

    /** What the reader needs of the connection's table of commands in flight. */
    interface Table {
        /** The command in flight with this cookie, or {@code null}. */
        Command lookup(long cookie);

        /** The command's last reply arrived: remove it and complete it ({@code error} null on success). */
        void done(Command command, IOException error);
    }

    /** The largest payload of a chunk that carries no data (error messages are at most 4096 bytes). */
    static final int MAX_CONTROL_PAYLOAD = 64 * 1024;

    private final ReadableByteChannel channel;
    private final boolean structured;
    private final int maxPayload;
    private final String where;
    private final Table table;
    private final ByteBuffer header = ByteBuffer.allocate(32);
    private final ByteBuffer scratch;
    private final ByteBuffer zeroes;

    ReplyReader(ReadableByteChannel channel, boolean structured, int maxPayload, String where, Table table) {
        this.channel = channel;
        this.structured = structured;
        this.maxPayload = maxPayload;
        this.where = where;
        this.table = table;
        this.scratch = ByteBuffer.allocateDirect(128 * 1024);
        this.zeroes = ByteBuffer.allocateDirect(64 * 1024);
    }

    /** Reads and handles one reply (a simple reply or one structured chunk). */
    void readOne() throws IOException {
        fill(header, 4);
        int magic = header.getInt(0);
        if (magic == Nbd.SIMPLE_REPLY_MAGIC) {
            simple();
        } else if (magic == Nbd.STRUCTURED_REPLY_MAGIC && structured) {
            chunk();
        } else {
            throw new NbdProtocolException(where + ": bad reply magic 0x" + Integer.toHexString(magic));
        }
    }

    private void simple() throws IOException {
        fill(header, 12);
        int error = header.getInt(0);
        long cookie = header.getLong(4);
        Command c = known(cookie);
        if (c.type == Nbd.CMD_READ && structured) {
            // proto.md: with structured replies the server MUST NOT send a simple reply to a read with data.
            if (error == 0) {
                throw new NbdProtocolException(where + ": simple reply to a read after structured replies were"
                        + " negotiated");
            }
        }
        if (error != 0) {
            table.done(c, new IOException(where + ": " + c.describe() + " failed: " + Nbd.errno(error)));
            return;
        }
        if (c.type == Nbd.CMD_READ) {
            readData(c, 0, c.length);
        }
        table.done(c, null);
    }

    private void chunk() throws IOException {
        fill(header, 16);
        int flags = Short.toUnsignedInt(header.getShort(0));
        int type = Short.toUnsignedInt(header.getShort(2));
        long cookie = header.getLong(4);
        long length = Integer.toUnsignedLong(header.getInt(12));
        Command c = known(cookie);
        switch (type) {
            case Nbd.REPLY_TYPE_NONE:
                if (length != 0) {
                    throw bad("NBD_REPLY_TYPE_NONE with " + length + " payload bytes");
                }
                if ((flags & Nbd.REPLY_FLAG_DONE) == 0) {
                    throw bad("NBD_REPLY_TYPE_NONE without NBD_REPLY_FLAG_DONE");
                }
                break;
            case Nbd.REPLY_TYPE_OFFSET_DATA: {
                if (c.type != Nbd.CMD_READ) {
                    throw bad("NBD_REPLY_TYPE_OFFSET_DATA for a " + c.describe());
                }
                if (length <= 8 || length - 8 > maxPayload) {
                    throw bad("NBD_REPLY_TYPE_OFFSET_DATA of " + length + " bytes");
                }
                fill(header, 8);
                long offset = header.getLong(0);
                long n = length - 8;
                long at = inRange(c, offset, n, "data");
                readData(c, at, (int) n);
                break;
            }
            case Nbd.REPLY_TYPE_OFFSET_HOLE: {
                if (c.type != Nbd.CMD_READ) {
                    throw bad("NBD_REPLY_TYPE_OFFSET_HOLE for a " + c.describe());
                }
                if (length != 12) {
                    throw bad("NBD_REPLY_TYPE_OFFSET_HOLE of " + length + " bytes, not 12");
                }
                fill(header, 12);
                long offset = header.getLong(0);
                long n = Integer.toUnsignedLong(header.getInt(8));
                if (n == 0) {
                    throw bad("an empty hole");
                }
                long at = inRange(c, offset, n, "hole");
                c.zero(at, n, zeroes);
                c.received += n;
                break;
            }
            default:
                if ((type & Nbd.REPLY_TYPE_ERROR_BIT) == 0) {
                    throw bad("unknown reply chunk type " + type);
                }
                error(c, type, length);
                break;
        }
        if ((flags & Nbd.REPLY_FLAG_DONE) != 0) {
            if (c.error != null) {
                table.done(c, c.error);
            } else if (c.type == Nbd.CMD_READ && c.received != c.length) {
                throw bad("the reply to a " + c.describe() + " covered " + c.received + " bytes");
            } else {
                table.done(c, null);
            }
        }
    }

    private void error(Command c, int type, long length) throws IOException {
        boolean withOffset = type == Nbd.REPLY_TYPE_ERROR_OFFSET;
        int fixed = withOffset ? 14 : 6;
        if (length < 6 || length > MAX_CONTROL_PAYLOAD) {
            throw bad("error chunk of " + length + " bytes");
        }
        ByteBuffer payload = ByteBuffer.allocate((int) length);
        fill(payload, (int) length);
        int error = payload.getInt(0);
        int messageLength = Short.toUnsignedInt(payload.getShort(4));
        String message = "";
        if (type == Nbd.REPLY_TYPE_ERROR || withOffset) {
            if (messageLength + fixed != length) {
                throw bad("error chunk of " + length + " bytes with a " + messageLength + "-byte message");
            }
            message = StandardCharsets.UTF_8.decode(payload.slice(6, messageLength)).toString();
        }
        if (c.error == null) {
            c.error = new IOException(where + ": " + c.describe() + " failed: "
                    + (error == 0 ? "an error chunk with error 0" : Nbd.errno(error))
                    + (message.isEmpty() ? "" : " (" + message + ")"));
        }
    }

    /** Checks a chunk's range lies in the command's; returns its offset within the command. */
    private long inRange(Command c, long offset, long n, String what) throws NbdProtocolException {
        long at = offset - c.offset;
        if (Long.compareUnsigned(offset, c.offset) < 0 || at > c.length || n > c.length - at) {
            throw bad("a " + what + " chunk at " + Long.toUnsignedString(offset) + " of " + n + " bytes is outside the "
                    + c.describe());
        }
        return at;
    }

    private Command known(long cookie) throws NbdProtocolException {
        Command c = table.lookup(cookie);
        if (c == null) {
            throw bad("a reply for cookie 0x" + Long.toHexString(cookie) + ", which no request in flight has");
        }
        return c;
    }

    private void readData(Command c, long at, int n) throws IOException {
        int done = 0;
        while (done < n) {
            int chunk = Math.min(scratch.capacity(), n - done);
            scratch.clear().limit(chunk);
            while (scratch.hasRemaining()) {
                if (channel.read(scratch) < 0) {
                    throw new EOFException(where + " closed the connection in the middle of a reply");
                }
            }
            scratch.flip();
            c.copyIn(at + done, scratch);
            done += chunk;
        }
        c.received += n;
    }

    private NbdProtocolException bad(String what) {
        return new NbdProtocolException(where + ": malformed reply: " + what);
    }

    /** Reads exactly {@code n} bytes into {@code b} from 0; position 0, limit n afterwards. */
    private void fill(ByteBuffer b, int n) throws IOException {
        b.clear().limit(n);
        while (b.hasRemaining()) {
            if (channel.read(b) < 0) {
                throw new EOFException(where + " closed the connection" + (b.position() > 0 ? " in the middle of a reply" : ""));
            }
        }
        b.flip();
    }
}
