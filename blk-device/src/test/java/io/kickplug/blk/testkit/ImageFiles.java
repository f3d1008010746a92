package io.kickplug.blk.testkit;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.blk.backend.FileBackend;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Path;

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
}
