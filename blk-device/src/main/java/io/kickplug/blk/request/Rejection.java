package io.kickplug.blk.request;

/**
 * Why a well-framed request is refused without reaching the backend.
 *
 * @param outcome {@link Outcome#IOERR} or {@link Outcome#UNSUPP}
 * @param reason one line for the log, citing the rule
 */
public record Rejection(Outcome outcome, String reason) {

    public Rejection {
        if (outcome == Outcome.OK) {
            throw new IllegalArgumentException("a rejection cannot succeed");
        }
    }

    static Rejection ioError(String reason) {
        return new Rejection(Outcome.IOERR, reason);
    }

    static Rejection unsupported(String reason) {
        return new Rejection(Outcome.UNSUPP, reason);
    }
}
