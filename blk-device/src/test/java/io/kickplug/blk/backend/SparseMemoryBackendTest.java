package io.kickplug.blk.backend;

import io.kickplug.blk.testkit.BackendIo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The memory backend allocates chunks on first write and frees them on whole-chunk zeroing. */
class SparseMemoryBackendTest {

    private static final long TIB = 1L << 40;

    private static byte[] read(MemoryBackend backend, long offset, int length) throws IOException {
        return BackendIo.read(backend, offset, false, length);
    }

    private static void write(MemoryBackend backend, long offset, byte[] data) throws IOException {
        BackendIo.write(backend, offset, data);
    }

    @Test
    void aTebibyteDiskAllocatesOnlyWhatIsWritten() throws IOException {
        MemoryBackend backend = new MemoryBackend(TIB, false);
        assertEquals(0, backend.allocatedBytes());
        byte[] block = BackendIo.random(4096, 1);
        write(backend, TIB - 4096, block);
        write(backend, 0, block);
        assertArrayEquals(block, read(backend, TIB - 4096, 4096));
        assertArrayEquals(new byte[4096], read(backend, TIB / 2, 4096));
        assertEquals(2L * MemoryBackend.DEFAULT_CHUNK, backend.allocatedBytes());
    }

    @Test
    void zeroingWholeChunksFreesThem() throws IOException {
        MemoryBackend backend = new MemoryBackend(8192, false, 2048);
        byte[] data = BackendIo.random(8192, 2);
        write(backend, 0, data);
        assertEquals(8192, backend.allocatedBytes());
        backend.discard(2048, 2048); // chunk 1 exactly
        assertEquals(6144, backend.allocatedBytes());
        backend.writeZeroes(4096 + 512, 2048 + 1536, true); // part of chunk 2, all of chunk 3
        assertEquals(4096, backend.allocatedBytes(), "chunk 2 is only partly zeroed");
        byte[] expected = data.clone();
        Arrays.fill(expected, 2048, 4096, (byte) 0);
        Arrays.fill(expected, 4096 + 512, 8192, (byte) 0);
        assertArrayEquals(expected, read(backend, 0, 8192));
        write(backend, 2048, new byte[] {7});
        assertEquals(7, read(backend, 2048, 1)[0], "a freed chunk is allocated again on write");
    }

    @Test
    void theShortLastChunkIsFreedWhenZeroedToTheEnd() throws IOException {
        MemoryBackend backend = new MemoryBackend(3072, false, 2048);
        write(backend, 0, BackendIo.random(3072, 3));
        backend.writeZeroes(2048, 1024, false);
        assertEquals(2048, backend.allocatedBytes());
        assertArrayEquals(new byte[1024], read(backend, 2048, 1024));
    }

    @Test
    void resizeShrinksAndGrowsWithZeroes() throws IOException {
        MemoryBackend backend = new MemoryBackend(8192, false, 2048);
        byte[] data = BackendIo.random(8192, 4);
        write(backend, 0, data);
        backend.resize(3072);
        assertEquals(3072, backend.size());
        assertEquals(4096, backend.allocatedBytes());
        assertThrows(IOException.class, () -> read(backend, 3072, 512));
        backend.resize(1 << 24);
        assertEquals(1 << 24, backend.size());
        assertArrayEquals(Arrays.copyOf(data, 3072), read(backend, 0, 3072));
        assertArrayEquals(new byte[5120], read(backend, 3072, 5120), "bytes cut off by a shrink do not come back");
        assertThrows(IOException.class, () -> backend.resize(1000));
        assertThrows(IOException.class, () -> new MemoryBackend(512, true).resize(1024));
    }

    @Test
    void zeroingIsRangeCheckedAndRefusedWhenReadOnly() {
        MemoryBackend backend = new MemoryBackend(4096, false, 1024);
        assertThrows(IOException.class, () -> backend.writeZeroes(4096 - 512, 1024, false));
        assertThrows(IOException.class, () -> backend.discard(-512, 512));
        MemoryBackend readOnly = new MemoryBackend(4096, true, 1024);
        assertThrows(IOException.class, () -> readOnly.writeZeroes(0, 512, false));
        assertTrue(readOnly.supportsDiscard() && readOnly.supportsWriteZeroes());
    }

    @Test
    void nullBackendDiscardsZeroesAndResizes() throws IOException {
        NullBackend backend = new NullBackend(4096, false);
        assertTrue(backend.supportsDiscard() && backend.supportsWriteZeroes());
        backend.discard(0, 4096);
        backend.writeZeroes(512, 512, true);
        assertThrows(IOException.class, () -> backend.writeZeroes(4096, 512, false));
        backend.resize(TIB);
        assertEquals(TIB, backend.size());
        ByteBuffer end = ByteBuffer.allocate(512);
        backend.read(TIB - 512, new ByteBuffer[] {end});
        assertArrayEquals(new byte[512], end.array());
        assertThrows(IOException.class, () -> backend.resize(100));
        assertThrows(IOException.class, () -> new NullBackend(512, true).discard(0, 512));
    }
}
