package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;

/** The built launcher jar the process-level tests run. */
final class LauncherJar {

    private LauncherJar() {
    }

    /** System property {@code kickplug.jar} (default target/kickplug.jar), absolute; fails the test when missing. */
    static Path built() {
        Path jar = Path.of(System.getProperty("kickplug.jar", "target/kickplug.jar")).toAbsolutePath();
        assertTrue(Files.isRegularFile(jar), "no launcher jar at " + jar);
        return jar;
    }
}
