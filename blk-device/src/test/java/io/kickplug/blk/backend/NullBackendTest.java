package io.kickplug.blk.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import java.io.IOException;
import java.nio.ByteBuffer;
import org.junit.jupiter.api.Test;

class NullBackendTest {

    @Test
    void readsZeroesAndDropsWrites() throws IOException {
        NullBackend backend = new NullBackend(1L << 40, false);
        ByteBuffer src = ByteBuffer.wrap(new byte[] {1, 2, 3});
        backend.write(0, new ByteBuffer[] {src});
        assertEquals(0, src.remaining(), "the write consumed its source");
        ByteBuffer dst = ByteBuffer.wrap(new byte[] {9, 9, 9});
        backend.read(0, new ByteBuffer[] {dst});
        assertArrayEquals(new byte[3], dst.array());
        assertThrows(IOException.class, () -> backend.read((1L << 40) - 1, new ByteBuffer[] {ByteBuffer.allocate(2)}));
    }

    @Test
    void factoriesCheckTheSpec() throws IOException {
        BlockBackend memory = new MemoryBackendFactory().open(new BackendSpec("memory", null, 8192, true));
        assertEquals("memory", memory.kind());
        assertEquals(8192, memory.size());
        assertEquals(true, memory.readOnly());
        BlockBackend nul = new NullBackendFactory().open(new BackendSpec("null", null, 1 << 20, false));
        assertEquals("null", nul.kind());
        DiskException odd = assertThrows(DiskException.class,
                () -> new NullBackendFactory().open(new BackendSpec("null", null, 1000, false)));
        assertEquals("null disk size 1000 is not a positive multiple of 512 bytes", odd.getMessage());
        assertThrows(DiskException.class,
                () -> new MemoryBackendFactory().open(new BackendSpec("memory", "/tmp/x", 4096, false)));
    }
}
