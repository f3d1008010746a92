package io.kickplug.api.guest;

import java.util.List;
import org.osgi.annotation.versioning.ProviderType;

/** Service of the simulated guest: its machine settings, read and changed at runtime. */
@ProviderType
public interface GuestControl {

    GuestSettings settings();

    /**
     * Replaces the settings for the next run.
     *
     * @return the settings now in force
     * @throws IllegalArgumentException for a value out of range or an unknown kick policy, with one line saying
     *     which
     */
    GuestSettings configure(GuestSettings settings);

    /** Names of the kick policies available now, sorted. */
    List<String> kickPolicies();
}
