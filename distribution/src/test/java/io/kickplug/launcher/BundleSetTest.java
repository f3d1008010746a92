package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BundleSetTest {

    @TempDir
    Path dir;

    @Test
    void servicesThenProjectWithApiFirstThenConsoleLast() throws IOException {
        // File names chosen so that alphabetical order would be wrong in every group.
        TestJars.bundle(dir, "a-shell.jar", "org.apache.felix.gogo.shell");
        TestJars.bundle(dir, "b-kp-shell.jar", "io.kickplug.shell");
        TestJars.bundle(dir, "c-guest.jar", "io.kickplug.guest");
        TestJars.bundle(dir, "d-extra.jar", "io.kickplug.zz.extra");
        TestJars.bundle(dir, "e-blk.jar", "io.kickplug.blk");
        TestJars.bundle(dir, "f-api.jar", "io.kickplug.api;singleton:=true");
        TestJars.bundle(dir, "g-transport.jar", "io.kickplug.virtio.transport");
        TestJars.bundle(dir, "h-poll.jar", "io.kickplug.poll");
        TestJars.bundle(dir, "i-command.jar", "org.apache.felix.gogo.command");
        TestJars.bundle(dir, "j-runtime.jar", "org.apache.felix.gogo.runtime");
        TestJars.bundle(dir, "k-scr.jar", "org.apache.felix.scr");
        TestJars.bundle(dir, "l-other.jar", "com.example.other");
        TestJars.bundle(dir, "m-function.jar", "org.osgi.util.function");
        TestJars.bundle(dir, "n-component.jar", "org.osgi.service.component");
        TestJars.bundle(dir, "o-promise.jar", "org.osgi.util.promise");

        BundleSet.Contents contents = BundleSet.scan(dir);

        assertEquals(List.of(
                "org.osgi.util.function", "org.osgi.util.promise", "org.osgi.service.component",
                "org.apache.felix.scr", "org.apache.felix.gogo.runtime", "org.apache.felix.gogo.command",
                "com.example.other",
                "io.kickplug.api", "io.kickplug.virtio.transport", "io.kickplug.blk", "io.kickplug.poll",
                "io.kickplug.guest", "io.kickplug.shell", "io.kickplug.zz.extra",
                "org.apache.felix.gogo.shell"),
                contents.bundles().stream().map(BundleSet.Jar::symbolicName).toList());
        assertTrue(contents.notBundles().isEmpty());
    }

    @Test
    void jarsWithoutSymbolicNameAreReportedNotInstalled() throws IOException {
        TestJars.bundle(dir, "api.jar", "io.kickplug.api");
        TestJars.write(dir.resolve("animal-sniffer-annotations.jar"), Map.of("Created-By", "test"), Map.of());
        Files.writeString(dir.resolve("notes.txt"), "not a jar");

        BundleSet.Contents contents = BundleSet.scan(dir);

        assertEquals(List.of("io.kickplug.api"), contents.bundles().stream().map(BundleSet.Jar::symbolicName).toList());
        assertEquals(List.of(dir.resolve("animal-sniffer-annotations.jar")), contents.notBundles());
    }

    @Test
    void fragmentsAreMarked() throws IOException {
        TestJars.write(dir.resolve("frag.jar"), Map.of("Bundle-SymbolicName", "x.frag", "Fragment-Host", "x"),
                Map.of());
        assertTrue(BundleSet.scan(dir).bundles().get(0).fragment());
    }

    @Test
    void missingDirectoryIsAnError() {
        IOException e = assertThrows(IOException.class, () -> BundleSet.scan(dir.resolve("nope")));
        assertTrue(e.getMessage().startsWith("no bundle directory"), e.getMessage());
    }
}
