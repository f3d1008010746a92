package io.kickplug.vhost.server;

import java.io.FileDescriptor;
import java.io.FileInputStream;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import org.newsclub.net.unix.AFUNIXServerSocket;
import org.newsclub.net.unix.FileDescriptorCast;

/**
 * A listening Unix socket this process inherited: by descriptor number, as QEMU's test harness hands one to
 * qemu-storage-daemon ({@code addr.type=fd,addr.str=N}), or by the name systemd's socket activation gives it
 * ({@code LISTEN_FDS}, {@code LISTEN_PID}, {@code LISTEN_FDNAMES}; sd_listen_fds(3): descriptors from 3 on). The
 * JDK cannot wrap a descriptor; junixsocket ({@link FileDescriptorCast}) wraps a duplicate of it.
 */
public final class InheritedSocket {

    /** sd_listen_fds(3): the first passed descriptor. */
    static final int SD_LISTEN_FDS_START = 3;

    private InheritedSocket() {
    }

    /**
     * The descriptor {@code str} names: a decimal number, or a name of {@code LISTEN_FDNAMES} when
     * {@code LISTEN_PID} is this process ({@code env} and {@code pid} are the process's).
     *
     * @throws IllegalArgumentException for anything else, saying why
     */
    public static int resolve(String str, Map<String, String> env, long pid) {
        if (str != null && !str.isEmpty() && str.chars().allMatch(c -> c >= '0' && c <= '9')) {
            try {
                return Integer.parseInt(str);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("descriptor " + str + " is out of range");
            }
        }
        String listenPid = env.get("LISTEN_PID");
        String listenFds = env.get("LISTEN_FDS");
        String names = env.get("LISTEN_FDNAMES");
        if (listenPid == null || listenFds == null || names == null || !listenPid.equals(Long.toString(pid))) {
            throw new IllegalArgumentException("'" + str + "' is not a descriptor number (and no LISTEN_FDNAMES "
                    + "of systemd's socket activation for this process names it)");
        }
        int count;
        try {
            count = Integer.parseInt(listenFds);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("LISTEN_FDS=" + listenFds + " is not a number");
        }
        List<String> list = Arrays.asList(names.split(":", -1));
        int index = list.indexOf(str);
        if (index < 0 || index >= count) {
            throw new IllegalArgumentException("no passed socket is named '" + str + "' (LISTEN_FDNAMES=" + names
                    + ")");
        }
        return SD_LISTEN_FDS_START + index;
    }

    /** A listening socket on a duplicate of {@code fd}; descriptor {@code fd} itself stays open. */
    static AFUNIXServerSocket listener(int fd) throws IOException {
        FileDescriptor inherited = FileDescriptorCast.unsafeUsing(fd).getFileDescriptor();
        FileDescriptorCast dup;
        try {
            dup = FileDescriptorCast.duplicating(inherited);
        } catch (IOException e) {
            throw new IOException("descriptor " + fd + " is not open: " + e.getMessage(), e);
        }
        if (!dup.isAvailable(AFUNIXServerSocket.class)) {
            closeQuietly(dup);
            throw new IOException("descriptor " + fd + " is not a listening Unix socket");
        }
        AFUNIXServerSocket server = dup.as(AFUNIXServerSocket.class);
        server.setDeleteOnClose(false); // the socket file belongs to whoever made the socket
        return server;
    }

    /**
     * Closes an inherited socket's duplicate without shutting the socket down: junixsocket's close shuts a socket
     * down, which would end it for every descriptor, so the duplicate is closed by the JDK first (close(2) only;
     * junixsocket then finds no descriptor to shut down). A thread blocked in accept on it is not woken by a close
     * (Linux), so the export connects to the socket once: the accept returns, the thread sees the export closed and
     * ends. When that cannot be done (the socket has no path to connect to), the socket is shut down after all, and
     * {@code fd} serves no later export.
     */
    static void close(AFUNIXServerSocket server, Thread acceptThread, String name) {
        System.Logger log = System.getLogger(InheritedSocket.class.getName());
        boolean woken = false;
        try {
            java.net.SocketAddress address = server.getLocalSocketAddress();
            if (address != null) {
                try (org.newsclub.net.unix.AFUNIXSocket wake = org.newsclub.net.unix.AFUNIXSocket.newInstance()) {
                    wake.connect(address);
                    woken = true;
                }
            }
        } catch (IOException | RuntimeException e) {
            log.log(System.Logger.Level.WARNING, "vhost-user " + name + ": cannot wake the accept on the inherited "
                    + "socket (" + e.getMessage() + "); shutting it down: it serves no later export");
        }
        try {
            if (woken) {
                acceptThread.join(10_000);
                if (!acceptThread.isAlive()) {
                    new FileInputStream(server.getFileDescriptor()).close();
                }
            }
            server.close();
        } catch (IOException e) {
            log.log(System.Logger.Level.DEBUG, "vhost-user " + name + ": closing the inherited socket's duplicate: "
                    + e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private static void closeQuietly(FileDescriptorCast c) {
        try {
            new FileInputStream(c.getFileDescriptor()).close();
        } catch (IOException | RuntimeException e) {
            // nothing more to do
        }
    }
}
