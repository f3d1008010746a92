package io.kickplug.vhost.protocol;

import java.io.Closeable;
import java.io.EOFException;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.newsclub.net.unix.AFUNIXSocket;

/**
 * Reads and writes vhost-user messages on a connected Unix socket, with file descriptors passed as
 * SCM_RIGHTS ancillary data. One reader thread and one writer thread at a time.
 */
public final class MessageChannel implements Closeable {

    /** Room for 64 descriptors of ancillary data per read. */
    private static final int ANCILLARY_BUFFER = 1024;

    private final AFUNIXSocket socket;
    private final InputStream in;
    private final OutputStream out;

    public MessageChannel(AFUNIXSocket socket) throws IOException {
        this.socket = socket;
        socket.setAncillaryReceiveBufferSize(ANCILLARY_BUFFER);
        this.in = socket.getInputStream();
        this.out = socket.getOutputStream();
    }

    /**
     * Reads the next message, or returns {@code null} when the peer closed the connection between messages.
     *
     * @throws ProtocolException for a header the stream cannot recover from (wrong version, size above
     *     {@link VhostUser#MAX_PAYLOAD}); descriptors received with it are closed
     * @throws EOFException when the connection ends inside a message
     */
    public Message read() throws IOException, ProtocolException {
        List<FileDescriptor> fds = new ArrayList<>();
        byte[] header = new byte[VhostUser.HEADER_SIZE];
        if (!readFully(header, fds, true)) {
            return null;
        }
        ByteBuffer h = ByteBuffer.wrap(header).order(ByteOrder.LITTLE_ENDIAN);
        int request = h.getInt();
        int flags = h.getInt();
        int size = h.getInt();
        if ((flags & VhostUser.VERSION_MASK) != VhostUser.VERSION) {
            closeAll(fds);
            throw new ProtocolException(String.format("message %s has flags 0x%x: version %d, expected %d",
                    VhostUser.name(request), flags, flags & VhostUser.VERSION_MASK, VhostUser.VERSION));
        }
        if (size < 0 || size > VhostUser.MAX_PAYLOAD) {
            closeAll(fds);
            throw new ProtocolException("message " + VhostUser.name(request) + " announces a payload of "
                    + Integer.toUnsignedString(size) + " bytes, more than " + VhostUser.MAX_PAYLOAD);
        }
        byte[] payload = new byte[size];
        try {
            if (!readFully(payload, fds, false)) {
                throw new EOFException("connection closed inside the payload of " + VhostUser.name(request));
            }
        } catch (IOException e) {
            closeAll(fds);
            throw e;
        }
        return new Message(request, flags, payload, fds.toArray(FileDescriptor[]::new));
    }

    /** Sends a reply to {@code request}: version 1, REPLY flag. */
    public void reply(int request, byte[] payload) throws IOException {
        send(request, VhostUser.VERSION | VhostUser.FLAG_REPLY, payload, null);
    }

    /** Sends a reply with file descriptors ({@code fds} may be {@code null}). */
    public void reply(int request, byte[] payload, FileDescriptor[] fds) throws IOException {
        send(request, VhostUser.VERSION | VhostUser.FLAG_REPLY, payload, fds);
    }

    /** Sends a message (the test client uses this to play the front-end). */
    public synchronized void send(int request, int flags, byte[] payload, FileDescriptor[] fds) throws IOException {
        byte[] p = payload == null ? new byte[0] : payload;
        ByteBuffer b = ByteBuffer.allocate(VhostUser.HEADER_SIZE + p.length).order(ByteOrder.LITTLE_ENDIAN);
        b.putInt(request).putInt(flags).putInt(p.length).put(p);
        if (fds != null && fds.length > 0) {
            socket.setOutboundFileDescriptors(fds);
        }
        out.write(b.array());
        out.flush();
    }

    private boolean readFully(byte[] buf, List<FileDescriptor> fds, boolean eofAllowedAtStart) throws IOException {
        int off = 0;
        while (off < buf.length) {
            int n = in.read(buf, off, buf.length - off);
            FileDescriptor[] received = socket.getReceivedFileDescriptors();
            if (received != null) {
                fds.addAll(Arrays.asList(received));
            }
            if (n < 0) {
                if (off == 0 && eofAllowedAtStart && fds.isEmpty()) {
                    return false;
                }
                closeAll(fds);
                throw new EOFException("connection closed after " + off + " of " + buf.length + " bytes");
            }
            off += n;
        }
        return true;
    }

    /** Closes descriptors nobody will use. */
    public static void closeAll(Iterable<FileDescriptor> fds) {
        for (FileDescriptor fd : fds) {
            Fds.close(fd);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
