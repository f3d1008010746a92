package io.kickplug.vhost.backend;

import io.kickplug.api.iothread.DescriptorPoller;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import org.newsclub.net.unix.AFPipe;
import org.newsclub.net.unix.KickplugPoll;

/**
 * The poll(2) that I/O threads borrow to wait on kick descriptors themselves (issue 12): junixsocket's native
 * poll through {@link KickplugPoll}, and a junixsocket pipe as the wake-up descriptor. Java 17 has no public way
 * to wait on an eventfd: a {@link java.nio.channels.Selector} takes only the JDK's own channels, and an eventfd
 * cannot be reopened as a file (ENXIO through /proc/self/fd).
 */
public final class JunixDescriptorPoller implements DescriptorPoller {

    public static final JunixDescriptorPoller INSTANCE = new JunixDescriptorPoller();

    private static final Logger LOG = System.getLogger(JunixDescriptorPoller.class.getName());

    private JunixDescriptorPoller() {
    }

    @Override
    public PollSet pollSet(FileDescriptor[] fds) {
        KickplugPoll.Set set = new KickplugPoll.Set(fds);
        return new PollSet() {
            @Override
            public int await(int timeoutMillis) throws IOException {
                return set.poll(timeoutMillis);
            }

            @Override
            public int ready(int i) {
                int r = set.ready(i);
                return ((r & KickplugPoll.READ) != 0 ? READABLE : 0) | ((r & KickplugPoll.INVALID) != 0 ? FAILED : 0);
            }
        };
    }

    @Override
    public Wakeup openWakeup() throws IOException {
        return new PipeWakeup(AFPipe.open());
    }

    /** A pipe: any thread writes a byte, the I/O thread drains it without blocking. */
    private static final class PipeWakeup implements Wakeup {
        private static final byte[] ONE = {1};
        private final AFPipe pipe;
        private final FileDescriptor source;
        private final FileOutputStream sink;
        private final ByteBuffer drain = ByteBuffer.allocate(64);
        private boolean closed;

        PipeWakeup(AFPipe pipe) throws IOException {
            this.pipe = pipe;
            this.source = pipe.source().getFileDescriptor();
            pipe.source().configureBlocking(false);
            pipe.sink().configureBlocking(false);
            this.sink = new FileOutputStream(pipe.sink().getFileDescriptor());
        }

        @Override
        public FileDescriptor fd() {
            return source;
        }

        /** Serialised with close(): a write never reaches a descriptor number reused after the close. */
        @Override
        public synchronized void signal() {
            if (closed) {
                return;
            }
            try {
                sink.write(ONE);
            } catch (IOException e) {
                // EAGAIN: the pipe is full, so it is readable already.
            }
        }

        @Override
        public void drain() {
            try {
                do {
                    drain.clear();
                } while (pipe.source().read(drain) == drain.capacity());
            } catch (IOException e) {
                LOG.log(Level.DEBUG, "draining the wake-up pipe: " + e.getMessage());
            }
        }

        @Override
        public synchronized void close() {
            if (!closed) {
                closed = true;
                try {
                    pipe.close();
                } catch (IOException e) {
                    LOG.log(Level.DEBUG, "closing the wake-up pipe: " + e.getMessage());
                }
            }
        }
    }
}
