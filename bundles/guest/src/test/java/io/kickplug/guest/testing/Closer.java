package io.kickplug.guest.testing;

import io.kickplug.virtio.testkit.Closing;
import java.util.ArrayDeque;
import java.util.Deque;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * What a test opened, closed after it, last opened first, as a JUnit extension: {@code @RegisterExtension final
 * Closer opened = new Closer();}, then {@code machine = opened.add(boot(...))}. A machine is so closed before its
 * transport, the transport (a device reset that waits for the requests in flight) before the I/O threads. Every
 * resource is closed even when one fails ({@link Closing#inOrder}).
 */
public final class Closer implements AfterEachCallback {

    private final Deque<AutoCloseable> open = new ArrayDeque<>();

    /** Registers {@code resource} to be closed after the test (or at {@link #closeAll}); returns it. */
    public <T extends AutoCloseable> T add(T resource) {
        open.push(resource);
        return resource;
    }

    /** Closes everything registered so far, last registered first, and forgets it. */
    public void closeAll() throws Exception {
        AutoCloseable[] lastFirst = open.toArray(new AutoCloseable[0]);
        open.clear();
        Closing.inOrder(lastFirst);
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        closeAll();
    }
}
