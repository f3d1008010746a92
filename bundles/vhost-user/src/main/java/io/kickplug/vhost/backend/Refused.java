package io.kickplug.vhost.backend;

/** A message the backend does not carry out; the message says why. */
final class Refused extends Exception {
    private static final long serialVersionUID = 1L;

    Refused(String message) {
        super(message);
    }

    Refused(String message, Throwable cause) {
        super(message, cause);
    }
}
