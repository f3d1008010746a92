package io.kickplug.guest.driver;

/** The simulated guest's driver gave up on a device; the message is one line meant for a user. */
public class GuestDriverException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public GuestDriverException(String message) {
        super(message);
    }

    public GuestDriverException(String message, Throwable cause) {
        super(message, cause);
    }
}
