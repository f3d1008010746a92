package io.kickplug.rbd;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.RbdImage;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Random;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** The backend's operations on images of the test cluster, checked against what the rbd CLI sees. */
@ExtendWith(MicroCeph.class)
class RbdBackendTest {

    private static final AtomicInteger IMAGES = new AtomicInteger();

    /** A new image of {@code mib} MiB; its name. */
    static String newImage(MicroCeph ceph, int mib) throws Exception {
        String name = "t" + ProcessHandle.current().pid() + "-" + IMAGES.incrementAndGet();
        ceph.rbd("create", "--size", mib + "M", "rbd/" + name);
        return name;
    }

    static BackendSpec spec(MicroCeph ceph, String image, String snapshot, boolean readOnly) {
        return new BackendSpec("rbd", new RbdImage("rbd", null, image, snapshot, ceph.conf().toString(), null, null)
                .toPath(), 0, readOnly);
    }

    private static ByteBuffer pattern(int bytes, long seed, boolean direct) {
        byte[] b = new byte[bytes];
        new Random(seed).nextBytes(b);
        ByteBuffer buf = direct ? ByteBuffer.allocateDirect(bytes) : ByteBuffer.allocate(bytes);
        buf.put(b).flip();
        return buf;
    }

    private static byte[] bytes(ByteBuffer b) {
        byte[] out = new byte[b.remaining()];
        b.duplicate().get(out);
        return out;
    }

    private static byte[] read(BlockBackend b, long offset, int length) throws IOException {
        ByteBuffer dst = ByteBuffer.allocateDirect(length);
        b.read(offset, new ByteBuffer[] {dst.duplicate()});
        return bytes(dst);
    }

    @Test
    void directHeapAndScatteredBuffersDiscardAndWriteZeroesLandInTheImage(MicroCeph ceph) throws Exception {
        String image = newImage(ceph, 8);
        RbdBackendFactory factory = new RbdBackendFactory();
        try (BlockBackend b = factory.open(spec(ceph, image, null, false))) {
            assertEquals(8 << 20, b.size(), "the capacity is the image's size");
            assertFalse(b.readOnly());
            assertTrue(b.supportsDiscard());
            assertTrue(b.supportsWriteZeroes(), "librbd 16 has rbd_aio_write_zeroes");
            // One direct buffer (no copy), a heap buffer (bounce), three direct slices of one write (writev).
            ByteBuffer direct = pattern(65536, 1, true);
            b.write(0, new ByteBuffer[] {direct.duplicate()});
            ByteBuffer heap = pattern(8192, 2, false);
            b.write(1 << 20, new ByteBuffer[] {heap.duplicate()});
            ByteBuffer whole = pattern(12288, 3, true);
            ByteBuffer[] parts = {whole.duplicate().limit(4096), whole.duplicate().position(4096).limit(4608),
                whole.duplicate().position(4608)};
            b.write(3 << 20, parts);
            b.flush();
            assertArrayEquals(bytes(direct), read(b, 0, 65536));
            ByteBuffer heapIn = ByteBuffer.allocate(8192);
            b.read(1 << 20, new ByteBuffer[] {heapIn.duplicate()});
            assertArrayEquals(bytes(heap), heapIn.array(), "a heap buffer is read through the bounce buffer");
            ByteBuffer s1 = ByteBuffer.allocateDirect(512);
            ByteBuffer s2 = ByteBuffer.allocateDirect(12288 - 512);
            b.read(3 << 20, new ByteBuffer[] {s1.duplicate(), s2.duplicate()});
            byte[] scattered = new byte[12288];
            s1.get(scattered, 0, 512);
            s2.get(scattered, 512, 12288 - 512);
            assertArrayEquals(bytes(whole), scattered, "readv fills the buffers in order");
            // The rbd CLI reads what the backend wrote.
            byte[] exported = ceph.rbdBytes("export", "rbd/" + image, "-");
            assertArrayEquals(bytes(direct), Arrays.copyOfRange(exported, 0, 65536));
            assertArrayEquals(bytes(whole), Arrays.copyOfRange(exported, 3 << 20, (3 << 20) + 12288));
            // librbd skips discards smaller than rbd_discard_granularity_bytes (64 KiB): a whole granule is dropped.
            b.discard(0, 65536);
            assertArrayEquals(new byte[65536], read(b, 0, 65536), "discarded");
            ByteBuffer more = pattern(65536, 4, true);
            b.write(65536, new ByteBuffer[] {more.duplicate()});
            b.writeZeroes(65536 + 8192, 8192, false);
            byte[] after = read(b, 65536, 65536);
            assertArrayEquals(Arrays.copyOfRange(bytes(more), 0, 8192), Arrays.copyOfRange(after, 0, 8192));
            assertArrayEquals(new byte[8192], Arrays.copyOfRange(after, 8192, 16384), "zeroed");
            assertArrayEquals(Arrays.copyOfRange(bytes(more), 16384, 65536), Arrays.copyOfRange(after, 16384, 65536));
        }
        assertEquals(0, factory.connections(), "the connection closes with the last disk");
    }

    @Test
    void aSnapshotOpensReadOnlyWithTheSnapshotsBytes(MicroCeph ceph) throws Exception {
        String image = newImage(ceph, 4);
        RbdBackendFactory factory = new RbdBackendFactory();
        ByteBuffer before = pattern(4096, 7, true);
        try (BlockBackend b = factory.open(spec(ceph, image, null, false))) {
            b.write(0, new ByteBuffer[] {before.duplicate()});
            b.flush();
            ceph.rbd("snap", "create", "rbd/" + image + "@s1");
            b.write(0, new ByteBuffer[] {pattern(4096, 8, true)});
            b.flush();
            try (BlockBackend snap = factory.open(spec(ceph, image, "s1", false))) {
                assertTrue(snap.readOnly(), "a snapshot is read-only");
                assertFalse(snap.supportsDiscard());
                assertArrayEquals(bytes(before), read(snap, 0, 4096), "the snapshot keeps the bytes it was taken with");
                assertEquals(1, factory.connections(), "the image and its snapshot share one cluster connection");
                IOException e = assertThrows(IOException.class, () -> snap.write(0, new ByteBuffer[] {
                    pattern(4096, 9, true)}));
                assertTrue(e.getMessage().contains("EROFS"), e.getMessage());
            }
        }
    }

    @Test
    void aMissingImageOrPoolIsAClearErrorWithTheErrno(MicroCeph ceph) {
        RbdBackendFactory factory = new RbdBackendFactory();
        DiskException e = assertThrows(DiskException.class, () -> factory.open(spec(ceph, "no-such-image", null,
                false)));
        assertTrue(e.getMessage().contains("rbd/no-such-image") && e.getMessage().contains("ENOENT"), e.getMessage());
        DiskException pool = assertThrows(DiskException.class, () -> factory.open(new BackendSpec("rbd",
                new RbdImage("nopool", null, "x", null, ceph.conf().toString(), null, null).toPath(), 0, false)));
        assertTrue(pool.getMessage().contains("pool 'nopool'") && pool.getMessage().contains("ENOENT"),
                pool.getMessage());
        DiskException conf = assertThrows(DiskException.class, () -> factory.open(new BackendSpec("rbd",
                new RbdImage("rbd", null, "x", null, "/nonexistent/ceph.conf", null, null).toPath(), 0, false)));
        assertTrue(conf.getMessage().contains("/nonexistent/ceph.conf"), conf.getMessage());
        assertEquals(0, factory.connections(), "a failed open leaves no connection");
    }

    @Test
    void aSizeThatIsNotTheImagesIsRefused(MicroCeph ceph) throws Exception {
        String image = newImage(ceph, 4);
        BackendSpec wrong = new BackendSpec("rbd", spec(ceph, image, null, false).path(), 8 << 20, false);
        DiskException e = assertThrows(DiskException.class, () -> new RbdBackendFactory().open(wrong));
        assertTrue(e.getMessage().contains("has 4194304 bytes, not the 8388608 asked for"), e.getMessage());
    }

    @Test
    void twoClientsOnOneImageWriteInTurnAndEachReadsTheOthersWrite(MicroCeph ceph) throws Exception {
        // Two factories: two cluster connections, two librbd clients, as two daemons would be. librbd's exclusive
        // lock moves to whichever writes.
        String image = newImage(ceph, 4);
        try (BlockBackend a = new RbdBackendFactory().open(spec(ceph, image, null, false));
                BlockBackend b = new RbdBackendFactory().open(spec(ceph, image, null, false))) {
            for (int round = 0; round < 4; round++) {
                BlockBackend writer = round % 2 == 0 ? a : b;
                BlockBackend reader = round % 2 == 0 ? b : a;
                ByteBuffer data = pattern(4096, 100 + round, true);
                writer.write(round * 4096L, new ByteBuffer[] {data.duplicate()});
                writer.flush();
                assertArrayEquals(bytes(data), read(reader, round * 4096L, 4096), "round " + round);
            }
        }
    }
}
