package io.kickplug.export.nbd;

import java.io.EOFException;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** A hand-written NBD client that sends whatever a test tells it to, valid or not, and reads raw replies. */
final class RawClient implements AutoCloseable {

    final SocketChannel ch;

    RawClient(Path socket) throws IOException {
        ch = SocketChannel.open(StandardProtocolFamily.UNIX);
        ch.connect(UnixDomainSocketAddress.of(socket));
    }

    /** Reads the greeting (checking it) and sends {@code clientFlags}. */
    RawClient hello(int clientFlags) throws IOException {
        ByteBuffer h = read(18);
        if (h.getLong() != Nbd.NBDMAGIC || h.getLong() != Nbd.IHAVEOPT) {
            throw new IOException("bad greeting");
        }
        int flags = Short.toUnsignedInt(h.getShort());
        if ((flags & Nbd.FLAG_FIXED_NEWSTYLE) == 0 || (flags & Nbd.FLAG_NO_ZEROES) == 0) {
            throw new IOException("greeting flags " + flags);
        }
        write(ByteBuffer.allocate(4).putInt(clientFlags).flip());
        return this;
    }

    RawClient hello() throws IOException {
        return hello(Nbd.FLAG_C_FIXED_NEWSTYLE | Nbd.FLAG_C_NO_ZEROES);
    }

    void option(int option, byte[] data) throws IOException {
        option(Nbd.IHAVEOPT, option, data.length, data);
    }

    void option(long magic, int option, int length, byte[] data) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(16 + data.length);
        b.putLong(magic).putInt(option).putInt(length).put(data).flip();
        write(b);
    }

    record OptionReply(int option, int type, byte[] data) {
        ByteBuffer buffer() {
            return ByteBuffer.wrap(data);
        }

        String text() {
            return new String(data, StandardCharsets.UTF_8);
        }
    }

    OptionReply optionReply() throws IOException {
        ByteBuffer h = read(20);
        if (h.getLong() != Nbd.OPTION_REPLY_MAGIC) {
            throw new IOException("bad option reply magic");
        }
        int option = h.getInt();
        int type = h.getInt();
        int length = h.getInt();
        byte[] data = new byte[length];
        read(length).get(data);
        return new OptionReply(option, type, data);
    }

    static byte[] goData(String name, int... infos) {
        byte[] n = name.getBytes(StandardCharsets.UTF_8);
        ByteBuffer b = ByteBuffer.allocate(4 + n.length + 2 + 2 * infos.length);
        b.putInt(n.length).put(n).putShort((short) infos.length);
        for (int i : infos) {
            b.putShort((short) i);
        }
        return b.array();
    }

    /** STRUCTURED_REPLY (when asked), then GO for {@code name}: the transmission flags. */
    int go(String name, boolean structured) throws IOException {
        if (structured) {
            option(Nbd.OPT_STRUCTURED_REPLY, new byte[0]);
            OptionReply r = optionReply();
            if (r.type() != Nbd.REP_ACK) {
                throw new IOException("structured replies refused");
            }
        }
        option(Nbd.OPT_GO, goData(name, Nbd.INFO_BLOCK_SIZE));
        int flags = -1;
        while (true) {
            OptionReply r = optionReply();
            if (r.type() == Nbd.REP_ACK) {
                return flags;
            }
            if (r.type() != Nbd.REP_INFO) {
                throw new IOException("GO refused: 0x" + Integer.toHexString(r.type()) + " " + r.text());
            }
            ByteBuffer b = r.buffer();
            if (b.getShort() == Nbd.INFO_EXPORT) {
                b.getLong();
                flags = Short.toUnsignedInt(b.getShort());
            }
        }
    }

    void request(int flags, int type, long cookie, long offset, int length, byte[] payload) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(28 + (payload == null ? 0 : payload.length));
        b.putInt(Nbd.REQUEST_MAGIC).putShort((short) flags).putShort((short) type).putLong(cookie).putLong(offset)
                .putInt(length);
        if (payload != null) {
            b.put(payload);
        }
        write(b.flip());
    }

    /** One reply, simple or a structured chunk. */
    record Reply(boolean structured, int error, long cookie, int flags, int type, byte[] payload) {
        boolean done() {
            return !structured || (flags & Nbd.REPLY_FLAG_DONE) != 0;
        }

        /** The error of a structured error chunk, or of a simple reply. */
        int errno() {
            if (!structured) {
                return error;
            }
            return (type & (1 << 15)) != 0 ? ByteBuffer.wrap(payload).getInt() : 0;
        }
    }

    /** A simple reply: {@code readLength} bytes of data follow a successful one (a READ without structured replies). */
    Reply reply(int readLength) throws IOException {
        ByteBuffer m = read(4);
        int magic = m.getInt();
        if (magic == Nbd.SIMPLE_REPLY_MAGIC) {
            ByteBuffer h = read(12);
            int error = h.getInt();
            long cookie = h.getLong();
            byte[] data = new byte[error == 0 ? readLength : 0];
            read(data.length).get(data);
            return new Reply(false, error, cookie, 0, 0, data);
        }
        if (magic == Nbd.STRUCTURED_REPLY_MAGIC) {
            ByteBuffer h = read(16);
            int flags = Short.toUnsignedInt(h.getShort());
            int type = Short.toUnsignedInt(h.getShort());
            long cookie = h.getLong();
            int length = h.getInt();
            byte[] data = new byte[length];
            read(length).get(data);
            return new Reply(true, 0, cookie, flags, type, data);
        }
        throw new IOException("bad reply magic 0x" + Integer.toHexString(magic));
    }

    /** Whether the server closed the connection: a read returns end of stream (within the socket's buffer). */
    boolean closedByServer() throws IOException {
        ByteBuffer b = ByteBuffer.allocate(1);
        try {
            return ch.read(b) < 0;
        } catch (IOException reset) {
            return true;
        }
    }

    ByteBuffer read(int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new EOFException("server closed the connection");
            }
        }
        return b.flip();
    }

    void write(ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    @Override
    public void close() throws IOException {
        ch.close();
    }
}
