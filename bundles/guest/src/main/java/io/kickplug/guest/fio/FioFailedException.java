package io.kickplug.guest.fio;

/**
 * A fio run that ran but failed (a verify failure, an I/O error): the message's first line is the first
 * failure with its offset, the lines after it are the run's normal output.
 */
public final class FioFailedException extends RuntimeException {

    private static final long serialVersionUID = 1L;

    private final transient FioReport report;

    public FioFailedException(FioReport report, String output) {
        super("fio failed: " + report.errorLines().get(0) + System.lineSeparator() + output);
        this.report = report;
    }

    public FioReport report() {
        return report;
    }
}
