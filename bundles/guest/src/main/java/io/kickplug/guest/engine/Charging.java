package io.kickplug.guest.engine;

/** How the code that ran is charged in {@link VirtualTime}. */
public enum Charging {
    /** The thread's CPU time of the code it ran, plus the hardware model. */
    MEASURED,
    /** Only the model: fixed software costs per request ({@link ModelCosts}); deterministic. */
    MODEL;

    public String label() {
        return name().toLowerCase(java.util.Locale.ROOT);
    }

    public static Charging parse(String s) {
        for (Charging c : values()) {
            if (c.label().equals(s)) {
                return c;
            }
        }
        throw new IllegalArgumentException("unknown charging '" + s + "' (expected measured or model)");
    }
}
