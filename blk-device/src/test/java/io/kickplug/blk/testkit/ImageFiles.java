package io.kickplug.blk.testkit;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.blk.backend.FileBackend;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.extension.AnnotatedElementContext;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.io.TempDirFactory;

/** Raw image files for tests that want the product's file backend under a device. */
public final class ImageFiles {

    private ImageFiles() {
    }

    /** Creates {@code file} as a sparse image of {@code size} bytes and opens it with the file backend, writable. */
    public static FileBackend openSparse(Path file, long size) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(size);
        }
        return FileBackend.open(new BackendSpec("file", file.toString(), 0, false));
    }

    /**
     * For {@code @TempDir(factory = ImageFiles.UnderTarget.class)}: the directory under {@code target/}, on the
     * build's disk, because O_DIRECT needs a disk file system and /tmp may be tmpfs. JUnit deletes it afterwards.
     */
    public static final class UnderTarget implements TempDirFactory {
        @Override
        public Path createTempDirectory(AnnotatedElementContext element, ExtensionContext context) throws IOException {
            return Files.createTempDirectory(Files.createDirectories(Path.of("target")), "kp-images-");
        }
    }
}
