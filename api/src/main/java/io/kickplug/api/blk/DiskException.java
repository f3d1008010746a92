package io.kickplug.api.blk;

/** A disk operation was refused or failed; the message is meant for a user, on one line. */
public class DiskException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public DiskException(String message) {
        super(message);
    }

    public DiskException(String message, Throwable cause) {
        super(message, cause);
    }
}
