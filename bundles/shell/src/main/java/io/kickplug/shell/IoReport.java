package io.kickplug.shell;

import io.kickplug.api.guest.IoPassOptions;
import io.kickplug.api.guest.IoPassResult;
import java.util.Locale;

/** The text {@code kp:io} prints, and its one-line failure. */
public final class IoReport {

    private IoReport() {
    }

    public static String format(IoPassOptions options, IoPassResult r) {
        return String.format(Locale.ROOT,
                "%s: write+read+verify of %s, bs %s, depth %d%n"
                        + "requests    %d%n"
                        + "elapsed     %.1f ms%n"
                        + "IOPS        %.0f%n"
                        + "MiB/s       %.1f%n"
                        + "mismatches  %d%n"
                        + "interrupts  %d (%.2f per request)%n"
                        + "notifies    %d (%.2f per request)",
                r.disk(), Sizes.format(r.bytes() / 2), Sizes.format(options.blockSize()), options.queueDepth(),
                r.requests(), r.elapsedNanos() / 1e6, r.iops(), r.mibPerSecond(), r.mismatches(),
                r.interrupts(), perRequest(r.interrupts(), r.requests()),
                r.notifies(), perRequest(r.notifies(), r.requests()));
    }

    private static double perRequest(long count, long requests) {
        return requests == 0 ? 0 : (double) count / requests;
    }

    /** The message of the exception {@code kp:io} throws when blocks read back differently. */
    public static String mismatchError(IoPassResult r) {
        return r.disk() + ": " + r.mismatches() + " block" + (r.mismatches() == 1 ? "" : "s")
                + " read back differently from what was written (" + r.requests() + " requests, "
                + Sizes.format(r.bytes() / 2) + ")";
    }
}
