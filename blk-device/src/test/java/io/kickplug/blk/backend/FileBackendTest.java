package io.kickplug.blk.backend;

import io.kickplug.blk.testkit.BackendIo;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.blk.testkit.ImageFiles;
import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The raw image file backend. Files live under target/ (a disk file system: O_DIRECT needs one; /tmp may be
 * tmpfs on other machines).
 */
class FileBackendTest {

    @TempDir(factory = ImageFiles.UnderTarget.class)
    Path dir;

    private Path image(String name, byte[] content) throws IOException {
        return Files.write(dir.resolve(name), content);
    }

    private static BackendSpec spec(Path path, boolean readOnly, boolean direct) {
        return new BackendSpec("file", path.toString(), 0, readOnly, direct);
    }

    private static byte[] read(FileBackend backend, long offset, int... pieces) throws IOException {
        return BackendIo.read(backend, offset, true, pieces);
    }

    /** Writes {@code data} split into pieces of the given sizes (heap and direct, odd addresses). */
    private static void write(FileBackend backend, long offset, byte[] data, int... pieces) throws IOException {
        BackendIo.write(backend, offset, data, pieces);
    }

    private DiskException attachError(BackendSpec spec) {
        return assertThrows(DiskException.class, () -> FileBackend.open(spec).close());
    }

    @Test
    void missingFileIsAClearAttachError() {
        DiskException e = attachError(spec(dir.resolve("nope.img"), false, false));
        assertTrue(e.getMessage().contains("does not exist"), e.getMessage());
        assertFalse(e.getMessage().contains("\n"));
    }

    @Test
    void directoryIsAClearAttachError() {
        DiskException e = attachError(spec(dir, false, false));
        assertTrue(e.getMessage().contains("is a directory"), e.getMessage());
    }

    @Test
    void sizeMustBeAPositiveMultipleOf512() throws IOException {
        assertTrue(attachError(spec(image("odd.img", new byte[1000]), false, false)).getMessage()
                .contains("not a positive multiple of 512"));
        assertTrue(attachError(spec(image("empty.img", new byte[0]), true, false)).getMessage()
                .contains("not a positive multiple of 512"));
    }

    @Test
    void sizeInTheSpecMustMatchTheFile() throws IOException {
        Path path = image("d.img", new byte[4096]);
        DiskException e = attachError(new BackendSpec("file", path.toString(), 8192, false));
        assertTrue(e.getMessage().contains("resize"), e.getMessage());
        assertEquals(4096, Files.size(path), "never extended by an attach");
    }

    @Test
    void noPathIsAnAttachError() {
        assertTrue(attachError(new BackendSpec("file", null, 0, false)).getMessage().contains("needs the path"));
    }

    /**
     * An open the kernel refuses (EACCES) is an attach error naming what was refused. Root reads and writes
     * every file whatever its mode, so the test opens through an opener that enforces the owner's mode bits
     * as the kernel does for a user without CAP_DAC_OVERRIDE: the test runs, and means the same, as root
     * (how CI runs) and as a user (where the real open refuses too).
     */
    @Test
    void unreadableAndUnwritableFilesAreAttachErrors() throws IOException {
        Path path = image("locked.img", new byte[512]);
        FileBackend.Opener asUser = (p, options) -> {
            Set<PosixFilePermission> mode = Files.getPosixFilePermissions(p);
            List<OpenOption> wanted = Arrays.asList(options);
            if (wanted.contains(StandardOpenOption.READ) && !mode.contains(PosixFilePermission.OWNER_READ)
                    || wanted.contains(StandardOpenOption.WRITE) && !mode.contains(PosixFilePermission.OWNER_WRITE)) {
                throw new AccessDeniedException(p.toString());
            }
            return FileChannel.open(p, options);
        };
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("---------"));
        assertEquals("image file '" + path + "' is not readable",
                assertThrows(DiskException.class, () -> FileBackend.open(spec(path, true, false), asUser)).getMessage());
        assertEquals("image file '" + path + "' is not readable",
                assertThrows(DiskException.class, () -> FileBackend.open(spec(path, false, false), asUser)).getMessage());
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("r--r--r--"));
        assertEquals("image file '" + path + "' is not writable (attach it read-only?)",
                assertThrows(DiskException.class, () -> FileBackend.open(spec(path, false, false), asUser)).getMessage());
        FileBackend.open(spec(path, true, false), asUser).close();
        Files.setPosixFilePermissions(path, PosixFilePermissions.fromString("rw-------"));
        FileBackend.open(spec(path, false, false), asUser).close();
    }

    @Test
    void dataRoundTripsThroughScatteredBuffers() throws IOException {
        Path path = image("rt.img", new byte[64 * 1024]);
        byte[] data = BackendIo.random(12 * 512, 1);
        try (FileBackend backend = FileBackend.open(spec(path, false, false))) {
            assertTrue(backend.blocking());
            assertEquals(64 * 1024, backend.size());
            write(backend, 3 * 512, data, 100, 3000, 3044);
            assertArrayEquals(data, read(backend, 3 * 512, 777, 5367));
        }
        byte[] file = Files.readAllBytes(path);
        assertArrayEquals(data, Arrays.copyOfRange(file, 3 * 512, 15 * 512));
        assertEquals(64 * 1024, file.length, "the image keeps its size");
    }

    @Test
    void accessesPastTheEndFailAndNeverExtendTheImage() throws IOException {
        Path path = image("end.img", new byte[4096]);
        try (FileBackend backend = FileBackend.open(spec(path, false, false))) {
            assertThrows(IOException.class, () -> write(backend, 4096 - 512, new byte[1024], 1024));
            assertThrows(IOException.class, () -> read(backend, 4096, 512));
        }
        assertEquals(4096, Files.size(path));
    }

    // A file shortened behind the backend's back: a short read is an error, not zeroes.
    @Test
    void shortReadPastTheEndOfTheFileIsAnError() throws IOException {
        Path path = image("short.img", new byte[4096]);
        try (FileBackend backend = FileBackend.open(spec(path, true, false));
                FileChannel other = FileChannel.open(path, java.nio.file.StandardOpenOption.WRITE)) {
            other.truncate(1024);
            IOException e = assertThrows(IOException.class, () -> read(backend, 512, 1024));
            assertTrue(e.getMessage().contains("ends at byte 1024"), e.getMessage());
        }
    }

    @Test
    void readOnlyOpensForReadingOnly() throws IOException {
        byte[] content = BackendIo.random(2048, 2);
        Path path = image("ro.img", content);
        try (FileBackend backend = FileBackend.open(spec(path, true, false))) {
            assertTrue(backend.readOnly());
            assertThrows(IOException.class, () -> write(backend, 0, new byte[512], 512));
            assertThrows(IOException.class, () -> backend.writeZeroes(0, 512, false));
            assertThrows(IOException.class, () -> backend.resize(4096));
            assertArrayEquals(content, read(backend, 0, 2048));
        }
        assertArrayEquals(content, Files.readAllBytes(path));
    }

    // FLUSH is fdatasync: force(false).
    @Test
    void flushCallsForce() throws IOException {
        Path path = image("f.img", new byte[4096]);
        AtomicReference<CountingChannel> channel = new AtomicReference<>();
        try (FileBackend backend = FileBackend.open(spec(path, false, false), (p, options) -> {
            channel.set(new CountingChannel(FileChannel.open(p, options)));
            return channel.get();
        })) {
            write(backend, 0, new byte[512], 512);
            assertEquals(0, channel.get().dataForces.get());
            backend.flush();
            assertEquals(1, channel.get().dataForces.get());
            assertEquals(0, channel.get().metadataForces.get());
        }
    }

    @Test
    void writeZeroesAndDiscardZeroFillAcrossChunks() throws IOException {
        int size = 3 * FileBackend.BOUNCE_BYTES + 4096;
        byte[] content = BackendIo.random(size, 3);
        Path path = image("z.img", content);
        try (FileBackend backend = FileBackend.open(spec(path, false, false))) {
            assertTrue(backend.supportsWriteZeroes());
            assertTrue(backend.supportsDiscard());
            backend.writeZeroes(512, 2L * FileBackend.BOUNCE_BYTES + 1024, true);
            backend.discard(size - 1024, 512);
        }
        byte[] after = Files.readAllBytes(path);
        assertEquals(size, after.length);
        for (int i = 0; i < size; i++) {
            boolean zero = (i >= 512 && i < 512 + 2 * FileBackend.BOUNCE_BYTES + 1024)
                    || (i >= size - 1024 && i < size - 512);
            if (zero ? after[i] != 0 : after[i] != content[i]) {
                throw new AssertionError("byte " + i + " is " + after[i]);
            }
        }
    }

    // Resize is the only way the image changes size; growing reads zeroes, even after a shrink.
    @Test
    void resizeUpAndDown() throws IOException {
        byte[] content = BackendIo.random(8192, 4);
        Path path = image("r.img", content);
        try (FileBackend backend = FileBackend.open(spec(path, false, false))) {
            backend.resize(4096);
            assertEquals(4096, backend.size());
            assertEquals(4096, Files.size(path));
            assertThrows(IOException.class, () -> read(backend, 4096, 512));
            backend.resize(16384);
            assertEquals(16384, Files.size(path));
            assertArrayEquals(Arrays.copyOf(content, 4096), read(backend, 0, 4096));
            assertArrayEquals(new byte[12288], read(backend, 4096, 12288));
            assertThrows(IOException.class, () -> backend.resize(1000));
            assertThrows(IOException.class, () -> backend.resize(0));
            assertEquals(16384, Files.size(path));
        }
    }

    // O_DIRECT on a file system that supports it: unaligned guest buffers and unaligned sectors still work.
    @Test
    void directIoRoundTripsUnalignedRequests() throws IOException {
        byte[] content = BackendIo.random(4 * FileBackend.BOUNCE_BYTES, 5);
        Path path = image("direct.img", content);
        byte[] data = BackendIo.random(5 * 512, 6);
        try (FileBackend backend = FileBackend.open(spec(path, false, true))) {
            assertTrue(backend.direct());
            write(backend, 512, data, 700, 1860); // starts and ends inside a 4 KiB block
            assertArrayEquals(data, read(backend, 512, 3, 2557));
            // Longer than one bounce buffer, unaligned at both ends: several windows, two partial blocks.
            byte[] big = BackendIo.random(FileBackend.BOUNCE_BYTES + 1536, 7);
            write(backend, 8192 + 512, big, big.length / 2, big.length - big.length / 2);
            assertArrayEquals(big, read(backend, 8192 + 512, big.length));
            backend.writeZeroes(1024, 512, false);
            backend.flush();
            System.arraycopy(data, 0, content, 512, data.length);
            System.arraycopy(big, 0, content, 8192 + 512, big.length);
            Arrays.fill(content, 1024, 1536, (byte) 0);
            assertArrayEquals(content, read(backend, 0, content.length));
        }
        assertArrayEquals(content, Files.readAllBytes(path), "neighbours of unaligned writes are preserved");
    }

    @Test
    void directIoNeedsABlockSizedImage() throws IOException {
        Path path = image("d512.img", new byte[512 * 3]);
        assertTrue(attachError(spec(path, false, true)).getMessage().contains("O_DIRECT"));
    }

    @Test
    void directResizeKeepsBlockSizes() throws IOException {
        Path path = image("dr.img", BackendIo.random(8192, 8));
        try (FileBackend backend = FileBackend.open(spec(path, false, true))) {
            backend.resize(65536);
            assertEquals(65536, Files.size(path));
            assertArrayEquals(new byte[65536 - 8192], read(backend, 8192, 65536 - 8192));
            assertThrows(IOException.class, () -> backend.resize(65536 + 512));
        }
    }

    // A file system that refuses O_DIRECT (tmpfs before Linux 6.6) fails the open with EINVAL.
    @Test
    void fileSystemRefusingDirectIoIsAClearAttachError() throws IOException {
        Path path = image("tmpfs.img", new byte[4096]);
        DiskException e = assertThrows(DiskException.class, () -> FileBackend.open(spec(path, false, true),
                (p, options) -> {
                    throw new IOException("Invalid argument");
                }));
        assertTrue(e.getMessage().contains("refuses O_DIRECT"), e.getMessage());
    }

    @Test
    void closedBackendRefusesIo() throws IOException {
        FileBackend backend = FileBackend.open(spec(image("c.img", new byte[512]), false, false));
        backend.close();
        backend.close();
        assertThrows(IOException.class, () -> read(backend, 0, 512));
        assertThrows(IOException.class, backend::flush);
    }
}
