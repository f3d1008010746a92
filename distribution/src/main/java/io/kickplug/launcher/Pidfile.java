package io.kickplug.launcher;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;

/** {@code --pidfile}: the process id and a line break, written whole (rename) and removed at exit if still ours. */
final class Pidfile {

    private Pidfile() {
    }

    static void write(Path file) throws IOException {
        Path target = file.toAbsolutePath();
        Path tmp = target.resolveSibling(target.getFileName() + ".tmp" + ProcessHandle.current().pid());
        Files.writeString(tmp, ProcessHandle.current().pid() + "\n", StandardCharsets.US_ASCII);
        Files.move(tmp, target, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
    }

    /** Removes the file when it still names this process (another instance may have taken it over). */
    static void remove(Path file) {
        try {
            String text = Files.readString(file, StandardCharsets.US_ASCII).strip();
            if (text.equals(Long.toString(ProcessHandle.current().pid()))) {
                Files.deleteIfExists(file);
            }
        } catch (NoSuchFileException e) {
            // already gone
        } catch (IOException e) {
            java.util.logging.Logger.getLogger("kickplug.launcher").warning("cannot remove the pid file " + file
                    + ": " + e.getMessage());
        }
    }
}
