package io.kickplug.api.lockstat;

import java.util.List;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Whiteboard service of a bundle with instrumented locks (the guest's vq locks, device-side locks): the
 * {@link LockStats} service merges the rows of every registered source into one table.
 */
@ConsumerType
public interface LockStatSource {

    /** A snapshot of this source's lock classes. */
    List<LockStatRow> lockStats();

    /** Zeroes this source's statistics (the classes stay). */
    void resetLockStats();
}
