package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.blk.backend.SharedMemoryBackend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Bytes that outlive the backend object that wrote them, and the files' life cycle. */
class SharedMemoryTest {

    @TempDir
    Path dir;

    @Test
    void aReopenedDiskHasItsBytesAndHolesReadZero() throws IOException {
        SharedMemory shm = new SharedMemory(dir, 4242);
        Path file = shm.diskFile("d0");
        byte[] data = new byte[4096];
        for (int i = 0; i < data.length; i++) {
            data[i] = (byte) (i * 7);
        }
        try (SharedMemoryBackend b = SharedMemoryBackend.open(file, 1 << 20, false)) {
            b.write(8192, new ByteBuffer[] {ByteBuffer.wrap(data)});
        }
        try (SharedMemoryBackend again = SharedMemoryBackend.open(file, 1 << 20, false)) {
            ByteBuffer back = ByteBuffer.allocate(4096);
            again.read(8192, new ByteBuffer[] {back});
            assertArrayEquals(data, back.array());
            ByteBuffer hole = ByteBuffer.allocate(512);
            again.read(0, new ByteBuffer[] {hole});
            assertArrayEquals(new byte[512], hole.array());
            assertThrows(IOException.class, () -> again.read((1 << 20) - 512, new ByteBuffer[] {ByteBuffer.allocate(1024)}));
        }
    }

    @Test
    void deleteAllTakesOnlyThisProcessesFilesAndTheSweepOnlyDeadOnes() throws IOException {
        long self = ProcessHandle.current().pid();
        SharedMemory mine = new SharedMemory(dir, self);
        Files.createFile(mine.diskFile("a"));
        Files.createFile(mine.ramFile("a"));
        // A pid that is not running: the largest pid_max is 2^22.
        SharedMemory dead = new SharedMemory(dir, (1 << 22) + 17);
        Files.createFile(dead.diskFile("b"));
        Files.createFile(dir.resolve("unrelated.disk"));
        assertEquals(1, mine.sweepDead());
        assertFalse(Files.exists(dead.diskFile("b")));
        assertTrue(Files.exists(mine.diskFile("a")));
        mine.deleteAll();
        assertFalse(Files.exists(mine.diskFile("a")));
        assertFalse(Files.exists(mine.ramFile("a")));
        assertTrue(Files.exists(dir.resolve("unrelated.disk")));
    }
}
