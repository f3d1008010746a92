package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.iothread.IoThread;
import java.util.concurrent.TimeUnit;

/** Test helper: one virtual I/O thread of a virtual time runs a body as its actor, then the time shuts down. */
final class VirtualTimeRuns {

    private VirtualTimeRuns() {
    }

    /** Runs {@code body} on a new I/O thread of {@code time} and waits (30 s at most) until the machine is idle. */
    static void onOneIoThread(VirtualTime time, Runnable body) {
        IoThread io = time.start("io0");
        try {
            io.execute(body);
            assertTrue(time.awaitIdle(TimeUnit.SECONDS.toNanos(30)), "the I/O thread did not finish");
        } finally {
            time.shutdown();
            io.close();
        }
    }
}
