package io.kickplug.sdk.testkit;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.blk.backend.FileBackendFactory;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** The project's file backend keeps the kit's backend contract (each backend on a fresh image file). */
class FileBackendContractTest extends BackendContractTest {

    @Override
    protected BackendContract contract() {
        return BackendContract.of(new FileBackendFactory()).specs((size, readOnly) -> {
            try {
                Path image = Files.createTempFile("kit-file-backend", ".img");
                image.toFile().deleteOnExit();
                try (FileChannel f = FileChannel.open(image, StandardOpenOption.WRITE)) {
                    f.write(ByteBuffer.allocate(1), size - 1);
                }
                return new BackendSpec("file", image.toString(), size, readOnly);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }
}
