package io.kickplug.api.blk;

import java.util.Map;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A filter between a disk's device and its backend (throttling, ...), registered as a service with the property
 * {@link #PROPERTY_NAME}. The disk manager offers every disk it attaches to every filter bound at that moment; a
 * filter returns the backend as it is for a disk it leaves alone. A filter must keep working, as a pass-through,
 * after its bundle stopped, for the disks attached before (they are given the filter again only when attached
 * again).
 */
@ConsumerType
public interface BackendFilter {

    String PROPERTY_NAME = "filter.name";

    /** "throttle", ... */
    String name();

    /**
     * The backend the disk's device uses: {@code backend} itself, or a wrapper around it whose {@code close()}
     * releases what the wrapper made and closes {@code backend}.
     */
    AsyncBlockBackend wrap(String disk, AsyncBlockBackend backend);

    /** Counters of the disk for {@code kp:stats} (name to value, snake_case), empty when the filter has none. */
    default Map<String, Long> stats(String disk) {
        return Map.of();
    }
}
