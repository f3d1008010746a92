package io.kickplug.virtio.testkit;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.ArrayList;
import java.util.List;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;

/**
 * A log handler that keeps what would be a host failure: a record at SEVERE or one with an exception (an
 * {@code EventLoopThread} logs whatever escaped a task that way). A test adds it to the "io.kickplug" logger and
 * asserts that nothing was kept.
 */
public final class HostFailures extends Handler {

    private final List<LogRecord> kept = new ArrayList<>();

    @Override
    public void publish(LogRecord r) {
        if (r.getLevel().intValue() >= Level.SEVERE.intValue() || r.getThrown() != null) {
            synchronized (kept) {
                kept.add(r);
            }
        }
    }

    /** Fails with {@code what} and the first record kept, if any. */
    public void assertNone(String what) {
        synchronized (kept) {
            assertTrue(kept.isEmpty(), () -> what + ": " + kept.get(0).getMessage() + " " + kept.get(0).getThrown());
        }
    }

    @Override
    public void flush() {
    }

    @Override
    public void close() {
    }
}
