package io.kickplug.api.guest;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/** Service of the simulated guest: the device removals and returns its drivers went through. */
@ProviderType
public interface DeviceRecoveries {

    /** Recoveries whose removal came at or after {@code sinceNanos} ({@link System#nanoTime}), oldest first. */
    List<DeviceRecovery> since(long sinceNanos);
}
