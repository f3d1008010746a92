package io.kickplug.api.memory;

/**
 * An access to guest memory that was already released (unmapped) because every lease on it had closed. Thrown
 * instead of touching the memory: a late access is refused, it cannot reach unmapped pages.
 */
public class ReleasedMemoryException extends GuestMemoryException {
    private static final long serialVersionUID = 1L;

    public ReleasedMemoryException(String message) {
        super(message);
    }
}
