package io.kickplug.nbd;

import java.io.IOException;

/** The server refused the export (unknown name, policy, TLS required, ...): reconnecting will not help. */
public final class NbdRefusedException extends IOException {

    private static final long serialVersionUID = 1L;

    public NbdRefusedException(String message) {
        super(message);
    }
}
