package io.kickplug.guest.fio;

import java.util.Locale;

/** fio's {@code verify} checksums that the runner implements. */
public enum VerifyKind {
    NONE,
    CRC32C,
    MD5;

    /** fio's name of the checksum: the constant's name in lower case, but {@code 0} for none. */
    public String fioName() {
        return this == NONE ? "0" : name().toLowerCase(Locale.ROOT);
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
