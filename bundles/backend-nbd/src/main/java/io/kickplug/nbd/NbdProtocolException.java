package io.kickplug.nbd;

import java.io.IOException;

/** The server broke the protocol (bad magic, unknown cookie, oversize length, truncated reply, ...). */
public final class NbdProtocolException extends IOException {

    private static final long serialVersionUID = 1L;

    public NbdProtocolException(String message) {
        super(message);
    }
}
