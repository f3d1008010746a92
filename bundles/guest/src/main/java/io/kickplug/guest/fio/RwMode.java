package io.kickplug.guest.fio;

import java.util.Locale;

/** fio's {@code rw} (alias {@code readwrite}) values that the runner implements. */
public enum RwMode {
    READ("read", false, true, false),
    WRITE("write", false, false, true),
    RANDREAD("randread", true, true, false),
    RANDWRITE("randwrite", true, false, true),
    /** Sequential mixed reads and writes ({@code rw=rw} or {@code rw=readwrite}). */
    RW("rw", false, true, true),
    RANDRW("randrw", true, true, true);

    private final String fioName;
    private final boolean random;
    private final boolean reads;
    private final boolean writes;

    RwMode(String fioName, boolean random, boolean reads, boolean writes) {
        this.fioName = fioName;
        this.random = random;
        this.reads = reads;
        this.writes = writes;
    }

    public String fioName() {
        return fioName;
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
