package io.kickplug.virtio.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The page-by-page comparison LiveMigrationIT and MigrationSwapIT run on a migration's two ends. */
class MigratedMemoryTest {

    @TempDir
    Path dir;

    @Test
    void listsEveryDifferingPageAndWhetherTheDeviceWroteIt() throws Exception {
        byte[] source = new byte[(1 << 20) + 3 * 4096]; // past one read chunk
        for (int i = 0; i < source.length; i++) {
            source[i] = (byte) (i * 31);
        }
        byte[] destination = source.clone();
        destination[5 * 4096 + 0x48] ^= 1; // one byte, a page only the CPUs wrote
        destination[(1 << 20) + 4096 + 7] ^= 2; // in the second chunk, a page the device wrote
        destination[(1 << 20) + 4096 + 4095] ^= 4;
        Path a = Files.write(dir.resolve("a"), source);
        Path b = Files.write(dir.resolve("b"), destination);

        MigratedMemory.Result r = MigratedMemory.compare(a, b, Set.of(257L, 9L));

        assertEquals(List.of(5L, 257L), r.pages().stream().map(MigratedMemory.Page::number).toList());
        assertEquals(1, r.pages().get(0).bytes());
        assertEquals(0x48, r.pages().get(0).first());
        assertFalse(r.pages().get(0).deviceWrote());
        assertEquals(2, r.pages().get(1).bytes());
        assertEquals(7, r.pages().get(1).first());
        assertTrue(r.pages().get(1).deviceWrote());
        assertEquals(List.of(r.pages().get(1)), r.deviceWritten());
        assertTrue(r.toString().startsWith("2 pages differ"), r.toString());
    }

    @Test
    void identicalImagesHaveNoPage() throws Exception {
        byte[] m = new byte[8 * 4096];
        m[100] = 1;
        Path a = Files.write(dir.resolve("a"), m);
        Path b = Files.write(dir.resolve("b"), m);
        MigratedMemory.Result r = MigratedMemory.compare(a, b, null);
        assertTrue(r.same());
        assertEquals(-1, r.deviceWrotePages());
    }
}
