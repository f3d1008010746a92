package io.kickplug.launcher;

import java.util.HashSet;
import java.util.Set;

/** Turns a failure into the one line the launcher prints. */
public final class Errors {

    private Errors() {
    }

    /**
     * The root cause's message on one line (line breaks and the indentation after them become one space).
     * A cause without a message is named by its class.
     */
    public static String message(Throwable failure) {
        Throwable root = failure;
        Set<Throwable> seen = new HashSet<>();
        while (root.getCause() != null && seen.add(root)) {
            root = root.getCause();
        }
        String message = root.getMessage();
        if (message == null || message.isBlank()) {
            message = root.getClass().getSimpleName();
        }
        return message.strip().replaceAll("\\s*\\R\\s*", " ");
    }
}
