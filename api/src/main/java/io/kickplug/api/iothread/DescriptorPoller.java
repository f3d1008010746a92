package io.kickplug.api.iothread;

import java.io.FileDescriptor;
import java.io.IOException;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * poll(2) over file descriptors, supplied by the bundle that owns them (the vhost-user bundle, through
 * junixsocket's native poll): Java 17 has no way to wait on an arbitrary descriptor such as an eventfd, so an
 * {@link IoThread} that waits on descriptors ({@link IoThread#registerDescriptor}) borrows the wait from the
 * descriptors' owner instead of carrying native code of its own.
 */
@ConsumerType
public interface DescriptorPoller {

    /** Bit of {@link PollSet#ready(int)}: the descriptor is readable. */
    int READABLE = 1;
    /** Bit of {@link PollSet#ready(int)}: poll reported an error, a hang-up or an invalid descriptor. */
    int FAILED = 1 << 7;

    /** A fixed set of descriptors, made once per change of the set and reused by every wait. */
    interface PollSet {

        /**
         * Waits until a descriptor of the set is readable or fails, or {@code timeoutMillis} passed (-1: no limit).
         *
         * @return the number of descriptors with events
         */
        int await(int timeoutMillis) throws IOException;

        /** What the last {@link #await} reported for descriptor {@code i}: {@link #READABLE}, {@link #FAILED}. */
        int ready(int i);
    }

    /** A wake-up descriptor: a pipe or eventfd that other threads write to end a wait. */
    interface Wakeup extends AutoCloseable {

        /** The readable end, to include in a {@link PollSet}. */
        FileDescriptor fd();

        /** Makes {@link #fd()} readable; callable from any thread, never blocks for long. */
        void signal();

        /** Reads what {@link #signal()} wrote; call only after a wait reported {@link #fd()} readable. */
        void drain();

        @Override
        void close();
    }

    PollSet pollSet(FileDescriptor[] fds);

    Wakeup openWakeup() throws IOException;
}
