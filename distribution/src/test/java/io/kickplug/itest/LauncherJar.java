package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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

    /**
     * The command line that runs {@code jar} with this JVM and {@code tmpDir} as the child's temporary directory
     * (mutable: callers add the launcher's arguments).
     */
    static List<String> command(Path jar, Path tmpDir) {
        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        if (Runtime.version().feature() >= 23) {
            // Felix calls sun.misc.Unsafe; newer JDKs warn on stderr unless allowed (build-facts, Java 25).
            command.add("--sun-misc-unsafe-memory-access=allow");
        }
        command.add("-Djava.io.tmpdir=" + tmpDir);
        command.add("-jar");
        command.add(jar.toString());
        return command;
    }
}
