package io.kickplug.vhost.testsupport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.newsclub.net.unix.AFPipe;

/** Reads of the pipes a test hands the back-end as eventfds (call, err), without blocking the test forever. */
public final class Pipes {

    private Pipes() {
    }

    /**
     * Reads up to {@code bytes} bytes from the pipe's read end on another thread: the count read, -1 at end of
     * file, -2 when the read failed; fails the test after 10 s.
     */
    public static int read(AFPipe pipe, int bytes) throws Exception {
        CompletableFuture<Integer> read = CompletableFuture.supplyAsync(() -> {
            try {
                return pipe.source().read(ByteBuffer.allocate(bytes));
            } catch (IOException e) {
                return -2;
            }
        });
        return read.get(10, TimeUnit.SECONDS);
    }

    /** Waits for the back-end to signal the error eventfd {@code err} (an 8-byte eventfd write). */
    public static void awaitErrorSignal(AFPipe err) throws Exception {
        assertEquals(8, read(err, 8), "the error eventfd was written");
    }
}
