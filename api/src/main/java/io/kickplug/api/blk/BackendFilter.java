package io.kickplug.api.blk;

import java.util.Map;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * A filter between a disk's device and its backend (throttling, ...), registered as a service with the property
 * {@link #PROPERTY_NAME}. The disk manager puts every disk's devices behind every filter bound, in order; a filter
 * returns the backend as it is for a disk it leaves alone. When a filter service comes or goes, the disk manager
 * wraps the running devices' backends again with the filters bound then (no device reset) and closes the wrappers
 * it replaced, so a filter's wrapper may be closed while its disk runs: its {@code close()} must then let what it
 * still holds go on to the backend, never fail it.
 */
@ConsumerType
public interface BackendFilter {

    String PROPERTY_NAME = "filter.name";

    /** "throttle", ... */
    String name();

    /**
     * The backend the disk's device uses: {@code backend} itself, or a wrapper around it whose {@code close()}
     * sends on what it holds, releases what the wrapper made and closes {@code backend}. Called again for a disk
     * whenever its filters are rebuilt (and once per device of the disk: vhost-user exports have their own).
     */
    AsyncBlockBackend wrap(String disk, AsyncBlockBackend backend);

    /** Counters of the disk for {@code kp:stats} (name to value, snake_case), empty when the filter has none. */
    default Map<String, Long> stats(String disk) {
        return Map.of();
    }
}
