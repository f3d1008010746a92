package io.kickplug.vhost.protocol;

/**
 * The message stream cannot be trusted any more (a header with a bad version or an impossible size): the
 * connection must be closed.
 */
public final class ProtocolException extends Exception {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }
}
