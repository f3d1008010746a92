package io.kickplug.guest.fio;

import java.util.Locale;

/** fio's {@code verify} checksums that the runner implements. */
public enum VerifyKind {
    NONE("0"),
    CRC32C("crc32c"),
    MD5("md5");

    private final String fioName;

    VerifyKind(String fioName) {
        this.fioName = fioName;
    }

    public String fioName() {
        return fioName;
    }

    public static VerifyKind parse(String text) {
        String t = text == null ? "" : text.trim().toLowerCase(Locale.ROOT);
        return switch (t) {
            case "0" -> NONE;
            case "crc32c", "crc32c-intel" -> CRC32C;
            case "md5" -> MD5;
            default -> throw new FioOptionException("invalid verify=" + text
                    + ": expected crc32c, crc32c-intel, md5 or 0");
        };
    }
}
