package io.kickplug.guest.fio;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Writing the report files (HTML, JSON) that kp:fio and the benchmarks leave behind. */
public final class TextFiles {

    private TextFiles() {
    }

    /**
     * Writes {@code text} to {@code file} in UTF-8, creating its directories; an I/O error becomes an
     * {@link UncheckedIOException} that names the file.
     */
    public static void write(Path file, String text) {
        try {
            Path parent = file.toAbsolutePath().getParent();
            if (parent != null) {
                Files.createDirectories(parent);
            }
            Files.writeString(file, text, StandardCharsets.UTF_8);
        } catch (IOException e) {
            throw new UncheckedIOException("cannot write " + file + ": " + e.getMessage(), e);
        }
    }
}
