package io.kickplug.nbd;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * An NBD server written for the tests: a correct fixed newstyle handshake (structured replies, a 1 MiB export),
 * then, per {@link Mode}, replies that break the protocol in one way. Serves every connection the same way.
 */
final class HostileNbdServer implements AutoCloseable {

    enum Mode {
        /** The hello has a bad magic. */
        HANDSHAKE_BAD_MAGIC,
        /** Replies start with a bad magic. */
        BAD_MAGIC,
        /** Replies carry a cookie no request has. */
        WRONG_COOKIE,
        /** A read's data chunk claims 64 MiB. */
        OVERSIZE,
        /** A read's data chunk is cut off in the middle and the connection closed. */
        TRUNCATED,
        /** Never replies. */
        SILENT,
        /** A data chunk outside the read's range. */
        OUT_OF_RANGE,
        /** Correct replies: a read returns bytes of value 7. */
        GOOD
    }

    static final long SIZE = 1 << 20;

    private final ServerSocketChannel server;
    private final Path socket;
    private final Mode mode;
    private final Thread acceptor;
    private final List<SocketChannel> clients = new ArrayList<>();
    final AtomicInteger connections = new AtomicInteger();
    private volatile boolean closed;

    HostileNbdServer(Path dir, Mode mode) throws IOException {
        this.socket = dir.resolve("hostile-" + mode + ".sock");
        Files.deleteIfExists(socket);
        this.mode = mode;
        server = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        server.bind(UnixDomainSocketAddress.of(socket));
        acceptor = new Thread(this::accept, "hostile-nbd-" + mode);
        acceptor.setDaemon(true);
        acceptor.start();
    }

    String uri() {
        return "nbd+unix:///x?socket=" + socket;
    }

    private void accept() {
        while (!closed) {
            try {
                SocketChannel ch = server.accept();
                connections.incrementAndGet();
                synchronized (clients) {
                    clients.add(ch);
                }
                Thread t = new Thread(() -> serve(ch), "hostile-nbd-client");
                t.setDaemon(true);
                t.start();
            } catch (IOException e) {
                return;
            }
        }
    }

    private void serve(SocketChannel ch) {
        try (ch) {
            ByteBuffer hello = ByteBuffer.allocate(18);
            hello.putLong(mode == Mode.HANDSHAKE_BAD_MAGIC ? 0x1122334455667788L : Nbd.NBDMAGIC).putLong(Nbd.IHAVEOPT)
                    .putShort((short) (Nbd.FLAG_FIXED_NEWSTYLE | Nbd.FLAG_NO_ZEROES)).flip();
            write(ch, hello);
            read(ch, 4);
            for (boolean going = true; going;) {
                ByteBuffer opt = read(ch, 16);
                opt.getLong();
                int option = opt.getInt();
                int length = opt.getInt();
                read(ch, length);
                if (option == Nbd.OPT_STRUCTURED_REPLY) {
                    write(ch, optReply(option, Nbd.REP_ACK, ByteBuffer.allocate(0)));
                } else if (option == Nbd.OPT_GO) {
                    ByteBuffer info = ByteBuffer.allocate(12).putShort((short) Nbd.INFO_EXPORT).putLong(SIZE)
                            .putShort((short) (Nbd.FLAG_HAS_FLAGS | Nbd.FLAG_SEND_FLUSH)).flip();
                    write(ch, optReply(option, Nbd.REP_INFO, info));
                    write(ch, optReply(option, Nbd.REP_ACK, ByteBuffer.allocate(0)));
                    going = false;
                } else {
                    write(ch, optReply(option, Nbd.REP_ERR_UNSUP, ByteBuffer.allocate(0)));
                }
            }
            for (;;) {
                ByteBuffer req = read(ch, 28);
                req.getInt();
                req.getShort();
                int type = req.getShort();
                long cookie = req.getLong();
                long offset = req.getLong();
                int length = req.getInt();
                if (type == Nbd.CMD_WRITE) {
                    read(ch, length);
                }
                if (type == Nbd.CMD_DISC) {
                    return;
                }
                reply(ch, type, cookie, offset, length);
            }
        } catch (IOException e) {
            // the client went away
        }
    }

    private void reply(SocketChannel ch, int type, long cookie, long offset, int length) throws IOException {
        switch (mode) {
            case BAD_MAGIC -> write(ch, ByteBuffer.allocate(16).putInt(0xdeadbeef).putInt(0).putLong(cookie).flip());
            case WRONG_COOKIE -> write(ch, ByteBuffer.allocate(16).putInt(Nbd.SIMPLE_REPLY_MAGIC).putInt(0)
                    .putLong(cookie ^ 0x5555_0000_0000L).flip());
            case OVERSIZE -> write(ch, chunkHeader(Nbd.REPLY_FLAG_DONE, Nbd.REPLY_TYPE_OFFSET_DATA, cookie,
                    (64 << 20) + 8));
            case TRUNCATED -> {
                write(ch, chunkHeader(Nbd.REPLY_FLAG_DONE, Nbd.REPLY_TYPE_OFFSET_DATA, cookie, length + 8));
                write(ch, ByteBuffer.allocate(8 + length / 2).putLong(offset).flip());
                throw new IOException("truncated on purpose");
            }
            case SILENT -> {
                // nothing
            }
            case OUT_OF_RANGE -> {
                write(ch, chunkHeader(Nbd.REPLY_FLAG_DONE, Nbd.REPLY_TYPE_OFFSET_DATA, cookie, length + 8));
                write(ch, ByteBuffer.allocate(8 + length).putLong(offset + 512).flip());
            }
            default -> {
                if (type == Nbd.CMD_READ) {
                    write(ch, chunkHeader(Nbd.REPLY_FLAG_DONE, Nbd.REPLY_TYPE_OFFSET_DATA, cookie, length + 8));
                    ByteBuffer data = ByteBuffer.allocate(8 + length).putLong(offset);
                    while (data.hasRemaining()) {
                        data.put((byte) 7);
                    }
                    write(ch, data.flip());
                } else {
                    write(ch, ByteBuffer.allocate(16).putInt(Nbd.SIMPLE_REPLY_MAGIC).putInt(0).putLong(cookie).flip());
                }
            }
        }
    }

    static ByteBuffer chunkHeader(int flags, int type, long cookie, long length) {
        return ByteBuffer.allocate(20).putInt(Nbd.STRUCTURED_REPLY_MAGIC).putShort((short) flags)
                .putShort((short) type).putLong(cookie).putInt((int) length).flip();
    }

    private static ByteBuffer optReply(int option, int type, ByteBuffer data) {
        ByteBuffer b = ByteBuffer.allocate(20 + data.remaining());
        return b.putLong(Nbd.OPTION_REPLY_MAGIC).putInt(option).putInt(type).putInt(data.remaining()).put(data).flip();
    }

    private static ByteBuffer read(SocketChannel ch, int n) throws IOException {
        ByteBuffer b = ByteBuffer.allocate(n);
        while (b.hasRemaining()) {
            if (ch.read(b) < 0) {
                throw new IOException("eof");
            }
        }
        return b.flip();
    }

    private static void write(SocketChannel ch, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            ch.write(b);
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        server.close();
        synchronized (clients) {
            for (SocketChannel c : clients) {
                c.close();
            }
        }
        Files.deleteIfExists(socket);
    }
}
