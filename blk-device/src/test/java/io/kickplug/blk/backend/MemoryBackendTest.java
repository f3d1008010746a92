package io.kickplug.blk.backend;

import io.kickplug.blk.testkit.BackendIo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Random;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.constraints.IntRange;
import org.junit.jupiter.api.Test;

class MemoryBackendTest {

    /** 4 chunks of 1024 bytes: every test crosses chunk boundaries cheaply. */
    private static MemoryBackend small() {
        return new MemoryBackend(4096, false, 1024);
    }

    private static byte[] read(MemoryBackend backend, long offset, int... pieces) throws IOException {
        return BackendIo.read(backend, offset, false, pieces);
    }

    @Test
    void startsZeroed() throws IOException {
        assertArrayEquals(new byte[4096], read(small(), 0, 4096));
    }

    @Test
    void writeAndReadAcrossAChunkBoundary() throws IOException {
        MemoryBackend backend = small();
        byte[] data = new byte[1536];
        new Random(1).nextBytes(data);
        // 512 bytes before the boundary at 1024, 1024 after it; sources split at odd places.
        ByteBuffer a = ByteBuffer.wrap(data, 0, 300).slice();
        ByteBuffer b = ByteBuffer.wrap(data, 300, 1236).slice();
        backend.write(512, new ByteBuffer[] {a, b});
        assertEquals(0, a.remaining());
        assertEquals(0, b.remaining());
        assertArrayEquals(data, read(backend, 512, 700, 836));
        assertArrayEquals(new byte[512], read(backend, 0, 512));
        assertArrayEquals(new byte[2048], read(backend, 2048, 2048));
    }

    @Test
    void spansEveryChunk() throws IOException {
        MemoryBackend backend = small();
        byte[] data = new byte[4096];
        new Random(2).nextBytes(data);
        backend.write(0, new ByteBuffer[] {ByteBuffer.wrap(data)});
        assertArrayEquals(data, read(backend, 0, 1, 4094, 1));
    }

    @Test
    void lastChunkMayBeShorter() throws IOException {
        MemoryBackend backend = new MemoryBackend(2560, false, 1024); // chunks 1024, 1024, 512
        byte[] data = new byte[1024];
        new Random(3).nextBytes(data);
        backend.write(1536, new ByteBuffer[] {ByteBuffer.wrap(data)});
        assertArrayEquals(data, read(backend, 1536, 1024));
        assertThrows(IOException.class, () -> read(backend, 2048, 1024));
    }

    @Test
    void refusesAccessesPastTheEnd() {
        MemoryBackend backend = small();
        assertThrows(IOException.class, () -> read(backend, 3584, 1024));
        assertThrows(IOException.class, () -> read(backend, -512, 512));
        assertThrows(IOException.class,
                () -> backend.write(Long.MAX_VALUE, new ByteBuffer[] {ByteBuffer.allocate(512)}));
    }

    @Test
    void readOnlyRefusesWrites() {
        MemoryBackend backend = new MemoryBackend(4096, true, 1024);
        assertThrows(IOException.class, () -> backend.write(0, new ByteBuffer[] {ByteBuffer.allocate(512)}));
    }

    @Test
    void closedBackendRefusesIo() {
        MemoryBackend backend = small();
        backend.close();
        backend.close(); // idempotent
        assertThrows(IOException.class, () -> read(backend, 0, 512));
        assertThrows(IOException.class, backend::flush);
    }

    @Test
    void sizeMustBeAPositiveMultipleOf512() {
        assertThrows(IllegalArgumentException.class, () -> new MemoryBackend(0, false));
        assertThrows(IllegalArgumentException.class, () -> new MemoryBackend(1000, false));
    }

    @Test
    void lastOfManyChunksIsAddressed() throws IOException {
        // Five small chunks stand in for the 1 GiB chunks of a disk over 2 GiB.
        MemoryBackend backend = new MemoryBackend(5 * 512, false, 512);
        byte[] data = new byte[512];
        new Random(4).nextBytes(data);
        backend.write(4 * 512, new ByteBuffer[] {ByteBuffer.wrap(data)});
        assertArrayEquals(data, read(backend, 4 * 512, 512));
    }

    /** Random writes and reads agree with a plain byte array. */
    @Property(tries = 200)
    void behavesLikeAnArray(@ForAll @IntRange(min = 1, max = 64) int chunk, @ForAll long seed) throws IOException {
        Random random = new Random(seed);
        int size = 4096;
        MemoryBackend backend = new MemoryBackend(size, false, chunk);
        byte[] model = new byte[size];
        for (int step = 0; step < 20; step++) {
            int offset = random.nextInt(size);
            int length = random.nextInt(size - offset + 1);
            if (random.nextBoolean()) {
                byte[] data = new byte[length];
                random.nextBytes(data);
                int cut = length == 0 ? 0 : random.nextInt(length + 1);
                backend.write(offset, new ByteBuffer[] {ByteBuffer.wrap(data, 0, cut).slice(),
                        ByteBuffer.wrap(data, cut, length - cut).slice()});
                System.arraycopy(data, 0, model, offset, length);
            } else {
                byte[] got = read(backend, offset, length);
                assertArrayEquals(java.util.Arrays.copyOfRange(model, offset, offset + length), got);
            }
        }
    }
}
