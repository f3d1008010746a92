package io.kickplug.api.iothread;

import org.osgi.annotation.versioning.ProviderType;

/** A registered handler on an {@link IoThread}. */
@ProviderType
public interface IoSource {

    /** Makes the handler run in the loop's next iteration; callable from any thread, never blocks. */
    void signal();

    /** Unregisters the handler; it is not run after this returns, unless running now on the loop. */
    void cancel();
}
