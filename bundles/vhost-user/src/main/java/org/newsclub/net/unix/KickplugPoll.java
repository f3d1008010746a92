package org.newsclub.net.unix;

import java.io.FileDescriptor;
import java.io.IOException;

/**
 * Kickplug's door to junixsocket's poll(2). Java 17 cannot wait on an arbitrary file descriptor (an eventfd
 * is neither a socket nor a file a {@link java.nio.channels.Selector} accepts), and QEMU's eventfds are
 * non-blocking, so a thread blocked in read(2) is not an option either. junixsocket already ships a native
 * poll(2) for its selector; this class lives in junixsocket's package (the jar is embedded in the same
 * bundle class loader, so the package is shared) to call it on any descriptor. Tied to junixsocket 2.11.1:
 * the build pins that version and the backend's tests fail if the internal signature changes.
 */
public final class KickplugPoll {

    /** Operation bit for readable (SelectionKey.OP_READ). */
    public static final int READ = 1;
    /** Set in a result when poll reported POLLERR, POLLHUP or POLLNVAL. */
    public static final int INVALID = 1 << 7;

    private KickplugPoll() {
    }

    /**
     * Waits until one of {@code fds} is readable, or {@code timeoutMillis} passed (-1: no limit).
     *
     * @param ready receives, per descriptor, {@link #READ} and/or {@link #INVALID}
     * @return the number of descriptors with events
     */
    public static int poll(FileDescriptor[] fds, int[] ready, int timeoutMillis) throws IOException {
        int[] ops = new int[fds.length];
        java.util.Arrays.fill(ops, READ);
        AFSelector.PollFd pollFd = new AFSelector.PollFd(fds, ops);
        int n = NativeUnixSocket.poll(pollFd, timeoutMillis);
        System.arraycopy(pollFd.rops, 0, ready, 0, fds.length);
        return n;
    }

    /** A fixed descriptor set polled again and again without allocating (an I/O thread's wait). */
    public static final class Set {
        private final AFSelector.PollFd pollFd;

        public Set(FileDescriptor[] fds) {
            int[] ops = new int[fds.length];
            java.util.Arrays.fill(ops, READ);
            this.pollFd = new AFSelector.PollFd(fds.clone(), ops);
        }

        /** Like {@link KickplugPoll#poll}; the result per descriptor is {@link #ready(int)}. */
        public int poll(int timeoutMillis) throws IOException {
            return NativeUnixSocket.poll(pollFd, timeoutMillis);
        }

        public int ready(int i) {
            return pollFd.rops[i];
        }
    }
}
