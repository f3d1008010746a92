package io.kickplug.guest.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** What this process maps, from Linux's /proc/self/maps: to see a guest memory file unmapped at once. */
public final class ProcessMaps {

    private ProcessMaps() {
    }

    /** Whether this process maps the file (only that file: other tests' mappings do not count). */
    public static boolean mapped(Path file) throws IOException {
        String name = file.toAbsolutePath().toString();
        return Files.readAllLines(Path.of("/proc/self/maps")).stream().anyMatch(l -> l.contains(name));
    }
}
