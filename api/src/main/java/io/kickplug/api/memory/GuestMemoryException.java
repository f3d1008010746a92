package io.kickplug.api.memory;

/** Base of the typed errors a guest-memory access raises. The access touched nothing. */
public class GuestMemoryException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public GuestMemoryException(String message) {
        super(message);
    }
}
