package io.kickplug.blk.backend;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

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

    @Test
    void withoutReadZeroesAReadConsumesTheBuffersAndLeavesThemAsTheyAre() throws IOException {
        NullBackend backend = new NullBackend(1 << 20, false, false, 0);
        ByteBuffer dst = ByteBuffer.wrap(new byte[] {9, 9, 9, 9});
        dst.position(1);
        backend.read(0, new ByteBuffer[] {dst});
        assertEquals(0, dst.remaining(), "the read consumed its buffer");
        assertArrayEquals(new byte[] {9, 9, 9, 9}, dst.array(), "QEMU null-co without read-zeroes moves no data");
        assertEquals(false, backend.blocking());
    }

    @Test
    void readZeroesFillsOnlyEachBuffersRemainingBytesInBulk() throws IOException {
        NullBackend backend = new NullBackend(1 << 20, false, true, 0);
        ByteBuffer big = ByteBuffer.allocateDirect(200 * 1024); // more than the 64 KiB zero source
        while (big.hasRemaining()) {
            big.put((byte) 7);
        }
        big.position(3).limit(big.capacity() - 5);
        ByteBuffer small = ByteBuffer.wrap(new byte[] {1, 2, 3});
        backend.read(0, new ByteBuffer[] {big, small});
        assertEquals(big.limit(), big.position());
        big.limit(big.capacity());
        for (int i = 0; i < big.capacity(); i++) {
            int want = i < 3 || i >= big.capacity() - 5 ? 7 : 0;
            assertEquals(want, big.get(i), "byte " + i);
        }
        assertArrayEquals(new byte[3], small.array());
    }

    @Test
    void latencyDelaysEveryRequestOnAWorkerNeverOnTheIoThread() throws IOException {
        long latency = 2_000_000;
        NullBackend backend = new NullBackend(1 << 20, false, false, latency);
        assertEquals(true, backend.blocking(), "with a latency the device runs the calls on its worker pool");
        long start = System.nanoTime();
        backend.read(0, new ByteBuffer[] {ByteBuffer.allocate(512)});
        backend.write(0, new ByteBuffer[] {ByteBuffer.allocate(512)});
        backend.flush();
        // A lower bound only: each of the three requests completed no earlier than its latency.
        assertTrue(System.nanoTime() - start >= 3 * latency);
        assertThrows(IllegalArgumentException.class, () -> new NullBackend(1 << 20, false, false, -1));
        assertThrows(IllegalArgumentException.class,
                () -> new NullBackend(1 << 20, false, false, BackendSpec.MAX_LATENCY_NS + 1));
    }

    @Test
    void theFactoryTakesBothOptionsFromTheSpecAndReadZeroesIsOffByDefault() throws IOException {
        NullBackend plain = (NullBackend) new NullBackendFactory().open(new BackendSpec("null", null, 1 << 20, false));
        assertEquals(false, plain.readZeroes(), "off by default, as in QEMU");
        assertEquals(0, plain.latencyNs());
        NullBackend set = (NullBackend) new NullBackendFactory().open(
                new BackendSpec("null", null, 1 << 20, false).withNullOptions(true, 1000));
        assertEquals(true, set.readZeroes());
        assertEquals(1000, set.latencyNs());
    }
}
