package io.kickplug.guest.fio;

import java.util.Locale;

/**
 * fio's {@code ioengine} values that the runner implements. Asynchronous engines keep up to
 * {@code iodepth} requests in flight and submit them in rounds; synchronous ones keep one in flight,
 * whatever {@code iodepth} says (as fio does).
 */
public enum IoEngine {
    LIBAIO(true, false),
    IO_URING(true, true),
    PSYNC(false, false),
    SYNC(false, false),
    /** preadv2/pwritev2: synchronous, with RWF_HIPRI when {@code hipri} is set. */
    PVSYNC2(false, true);

    private final boolean async;
    private final boolean hipriCapable;

    IoEngine(boolean async, boolean hipriCapable) {
        this.async = async;
        this.hipriCapable = hipriCapable;
    }

    /** fio's name of the engine: the constant's name in lower case ({@code libaio}, {@code io_uring}...). */
    public String fioName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public boolean async() {
        return async;
    }

    /** Whether fio accepts {@code hipri} with this engine (io_uring and pvsync2). */
    public boolean hipriCapable() {
        return hipriCapable;
    }

    public static IoEngine parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        for (IoEngine e : values()) {
            if (e.fioName().equals(t)) {
                return e;
            }
        }
        throw new FioOptionException("invalid ioengine=" + text
                + ": expected libaio, io_uring, psync, sync or pvsync2");
    }
}
