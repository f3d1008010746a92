package io.kickplug.nbd;

import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.ByteChannel;
import java.nio.charset.StandardCharsets;

/**
 * The client side of the fixed newstyle negotiation (proto.md "Fixed newstyle negotiation"): magic and handshake
 * flags, client flags, NBD_OPT_STRUCTURED_REPLY, then NBD_OPT_GO with the export name asking for
 * NBD_INFO_BLOCK_SIZE. Every length the server sends is bounded before anything is read into memory.
 */
final class Handshake {

    /** The largest option reply payload accepted (proto.md bounds strings at 4096 bytes; info is smaller). */
    static final int MAX_OPTION_REPLY = 64 * 1024;

    private final ByteChannel channel;
    private final String where;

    Handshake(ByteChannel channel, String where) {
        this.channel = channel;
        this.where = where;
    }

    ExportInfo negotiate(String export) throws IOException {
        ByteBuffer hello = read(18);
        long magic = hello.getLong();
        if (magic == Nbd.NBDMAGIC) {
            long second = hello.getLong();
            if (second == Nbd.OLDSTYLE_MAGIC) {
                throw new NbdProtocolException(where + " speaks the oldstyle NBD handshake, which is not supported");
            }
            if (second != Nbd.IHAVEOPT) {
                throw new NbdProtocolException(where + " is not an NBD newstyle server (second magic 0x"
                        + Long.toHexString(second) + ")");
            }
        } else {
            throw new NbdProtocolException(where + " is not an NBD server (bad magic 0x" + Long.toHexString(magic) + ")");
        }
        int serverFlags = Short.toUnsignedInt(hello.getShort());
        if ((serverFlags & Nbd.FLAG_FIXED_NEWSTYLE) == 0) {
            throw new NbdProtocolException(where + " does not offer fixed newstyle negotiation");
        }
        int clientFlags = Nbd.FLAG_C_FIXED_NEWSTYLE | (serverFlags & Nbd.FLAG_NO_ZEROES);
        write(ByteBuffer.allocate(4).putInt(clientFlags).flip());

        boolean structured = structuredReplies();
        return go(export, structured);
    }

    private boolean structuredReplies() throws IOException {
        sendOption(Nbd.OPT_STRUCTURED_REPLY, ByteBuffer.allocate(0));
        Reply reply = readReply(Nbd.OPT_STRUCTURED_REPLY);
        if (reply.type == Nbd.REP_ACK) {
            return true;
        }
        if ((reply.type & Nbd.REP_FLAG_ERROR) != 0) {
            return false; // simple replies then
        }
        throw new NbdProtocolException(where + ": unexpected reply 0x" + Integer.toHexString(reply.type)
                + " to NBD_OPT_STRUCTURED_REPLY");
    }

    private ExportInfo go(String export, boolean structured) throws IOException {
        byte[] name = export.getBytes(StandardCharsets.UTF_8);
        ByteBuffer data = ByteBuffer.allocate(4 + name.length + 2 + 2);
        data.putInt(name.length).put(name).putShort((short) 1).putShort((short) Nbd.INFO_BLOCK_SIZE).flip();
        sendOption(Nbd.OPT_GO, data);
        long size = -1;
        int flags = 0;
        int min = 1;
        int preferred = 4096;
        int max = Nbd.DEFAULT_MAX_PAYLOAD;
        for (;;) {
            Reply reply = readReply(Nbd.OPT_GO);
            if (reply.type == Nbd.REP_ACK) {
                break;
            }
            if ((reply.type & Nbd.REP_FLAG_ERROR) != 0) {
                String message = StandardCharsets.UTF_8.decode(reply.payload).toString();
                throw new NbdRefusedException(where + " refused export '" + export + "': "
                        + Nbd.optionError(reply.type) + (message.isEmpty() ? "" : ": " + message));
            }
            if (reply.type != Nbd.REP_INFO) {
                throw new NbdProtocolException(where + ": unexpected reply 0x" + Integer.toHexString(reply.type)
                        + " to NBD_OPT_GO");
            }
            ByteBuffer p = reply.payload;
            if (p.remaining() < 2) {
                throw new NbdProtocolException(where + ": NBD_REP_INFO of " + p.remaining() + " bytes");
            }
            int info = Short.toUnsignedInt(p.getShort());
            if (info == Nbd.INFO_EXPORT) {
                if (p.remaining() != 10) {
                    throw new NbdProtocolException(where + ": NBD_INFO_EXPORT of " + (p.remaining() + 2) + " bytes, not 12");
                }
                size = p.getLong();
                flags = Short.toUnsignedInt(p.getShort());
            } else if (info == Nbd.INFO_BLOCK_SIZE) {
                if (p.remaining() != 12) {
                    throw new NbdProtocolException(where + ": NBD_INFO_BLOCK_SIZE of " + (p.remaining() + 2)
                            + " bytes, not 14");
                }
                min = p.getInt();
                preferred = p.getInt();
                max = p.getInt();
                // proto.md: powers of two, min <= 64 KiB, min <= preferred, preferred <= max (max a multiple of min).
                if (min < 1 || min > 65536 || Integer.bitCount(min) != 1 || preferred < min
                        || Integer.bitCount(preferred) != 1 || (max != -1 && (max < preferred || max % min != 0))) {
                    throw new NbdProtocolException(where + ": invalid block sizes min " + Integer.toUnsignedString(min)
                            + " preferred " + Integer.toUnsignedString(preferred) + " max " + Integer.toUnsignedString(max));
                }
                if (max == -1 || max > Nbd.DEFAULT_MAX_PAYLOAD) {
                    max = Nbd.DEFAULT_MAX_PAYLOAD; // 0xffffffff: no limit; Kickplug sends at most 32 MiB anyway
                }
            }
            // other information (name, description): not needed
        }
        if (size < 0) {
            throw new NbdProtocolException(where + ": NBD_OPT_GO ended without NBD_INFO_EXPORT");
        }
        if ((flags & Nbd.FLAG_HAS_FLAGS) == 0) {
            throw new NbdProtocolException(where + ": transmission flags without NBD_FLAG_HAS_FLAGS");
        }
        return new ExportInfo(size, flags, min, preferred, max, structured);
    }

    private void sendOption(int option, ByteBuffer data) throws IOException {
        ByteBuffer header = ByteBuffer.allocate(16 + data.remaining());
        header.putLong(Nbd.IHAVEOPT).putInt(option).putInt(data.remaining()).put(data).flip();
        write(header);
    }

    private record Reply(int type, ByteBuffer payload) {
    }

    private Reply readReply(int option) throws IOException {
        ByteBuffer h = read(20);
        long magic = h.getLong();
        if (magic != Nbd.OPTION_REPLY_MAGIC) {
            throw new NbdProtocolException(where + ": bad option reply magic 0x" + Long.toHexString(magic));
        }
        int replyOption = h.getInt();
        int type = h.getInt();
        int length = h.getInt();
        if (replyOption != option) {
            throw new NbdProtocolException(where + ": reply for option " + replyOption + ", expected " + option);
        }
        if (length < 0 || length > MAX_OPTION_REPLY) {
            throw new NbdProtocolException(where + ": option reply of " + Integer.toUnsignedString(length)
                    + " bytes (at most " + MAX_OPTION_REPLY + ")");
        }
        return new Reply(type, read(length));
    }

    private ByteBuffer read(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (channel.read(b) < 0) {
                throw new EOFException(where + " closed the connection during the handshake");
            }
        }
        return b.flip();
    }

    private void write(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            channel.write(b);
        }
    }
}
