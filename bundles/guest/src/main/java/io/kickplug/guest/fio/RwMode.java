package io.kickplug.guest.fio;

import java.util.Locale;

/** fio's {@code rw} (alias {@code readwrite}) values that the runner implements. */
public enum RwMode {
    READ(false, true, false),
    WRITE(false, false, true),
    RANDREAD(true, true, false),
    RANDWRITE(true, false, true),
    /** Sequential mixed reads and writes ({@code rw=rw} or {@code rw=readwrite}). */
    RW(false, true, true),
    RANDRW(true, true, true);

    private final boolean random;
    private final boolean reads;
    private final boolean writes;

    RwMode(boolean random, boolean reads, boolean writes) {
        this.random = random;
        this.reads = reads;
        this.writes = writes;
    }

    /** fio's name of the mode: the constant's name in lower case ({@code randread}...). */
    public String fioName() {
        return name().toLowerCase(Locale.ROOT);
    }

    public boolean random() {
        return random;
    }

    public boolean reads() {
        return reads;
    }

    public boolean writes() {
        return writes;
    }

    public boolean mixed() {
        return reads && writes;
    }

    public static RwMode parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "read" -> READ;
            case "write" -> WRITE;
            case "randread" -> RANDREAD;
            case "randwrite" -> RANDWRITE;
            case "rw", "readwrite" -> RW;
            case "randrw" -> RANDRW;
            default -> throw new FioOptionException("invalid rw=" + text
                    + ": expected read, write, randread, randwrite, rw, readwrite or randrw");
        };
    }
}
