package io.kickplug.guest.fio;

/** Bad fio input (an option, a value, a job file line): the message is one line that says what and where. */
public final class FioOptionException extends IllegalArgumentException {

    private static final long serialVersionUID = 1L;

    public FioOptionException(String message) {
        super(message);
    }
}
