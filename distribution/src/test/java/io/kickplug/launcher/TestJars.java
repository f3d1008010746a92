package io.kickplug.launcher;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

/** Writes small jars with chosen manifest headers and entries. */
final class TestJars {

    private TestJars() {
    }

    static Path write(Path file, Map<String, String> headers, Map<String, String> entries) throws IOException {
        Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        headers.forEach((k, v) -> manifest.getMainAttributes().putValue(k, v));
        try (OutputStream out = Files.newOutputStream(file); JarOutputStream jar = new JarOutputStream(out, manifest)) {
            for (Map.Entry<String, String> e : entries.entrySet()) {
                jar.putNextEntry(new JarEntry(e.getKey()));
                jar.write(e.getValue().getBytes(StandardCharsets.UTF_8));
                jar.closeEntry();
            }
        }
        return file;
    }

    static Path bundle(Path dir, String fileName, String bsn) throws IOException {
        return write(dir.resolve(fileName), Map.of("Bundle-ManifestVersion", "2", "Bundle-SymbolicName", bsn,
                "Bundle-Version", "1.0.0"), Map.of());
    }
}
