package io.kickplug.launcher;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/** A folder and everything below it, removed as one: the launcher's caches, temporary folders and state. */
final class FileTree {

    private FileTree() {
    }

    /**
     * Deletes {@code root} and everything below it, deepest first; what is gone already is skipped.
     *
     * @throws IOException when {@code root} cannot be walked or a file cannot be deleted; an
     *     {@link java.io.UncheckedIOException} when a folder below it cannot be read
     */
    static void delete(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }
}
