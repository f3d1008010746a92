package io.kickplug.api.control;

import java.util.Map;
import org.osgi.annotation.versioning.ProviderType;

/** The throttle filter's groups (QEMU's throttle-group objects), for callers that are not its Gogo command. */
@ProviderType
public interface ThrottleControl {

    /**
     * Moves {@code disk} into throttle group {@code group} and sets the group's limits, at once and without a
     * reset; kept in the disk's configuration as {@code kp:throttle} keeps them.
     *
     * @param limits QEMU's names without the {@code x-} ({@code iops-total}, {@code bps-read-max},
     *     {@code iops-write-max-length}, ...) to values; the group's other limits are cleared
     * @throws IllegalArgumentException for an unknown limit, an invalid combination or a bad group name
     */
    void configure(String disk, String group, Map<String, Long> limits);
}
