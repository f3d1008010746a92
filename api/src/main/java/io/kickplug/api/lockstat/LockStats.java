package io.kickplug.api.lockstat;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/** The lock statistics table ({@code kp:lockstat}): every {@link LockStatSource}'s rows, resettable. */
@ProviderType
public interface LockStats {

    /** All lock classes of all sources, sorted by name. */
    List<LockStatRow> rows();

    /** Zeroes every source's statistics, as {@code echo 0 > /proc/lock_stat}. */
    void reset();
}
