package io.kickplug.guest.virtio;

import io.kickplug.guest.driver.GuestDriverException;

/** A returned device the guest cannot resume on (other memory, other features): waiting for another will not help. */
public final class NotTheSameDevice extends GuestDriverException {
    private static final long serialVersionUID = 1L;

    NotTheSameDevice(String message) {
        super(message);
    }
}
