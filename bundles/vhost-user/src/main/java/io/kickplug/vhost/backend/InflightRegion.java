package io.kickplug.vhost.backend;

import io.kickplug.vhost.protocol.Fds;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;

/**
 * The shared inflight-tracking area of vhost-user (docs/interop/vhost-user.rst "Inflight I/O tracking",
 * split virtqueues): one {@code QueueRegionSplit} per queue, each
 * {@code {u64 features; u16 version; u16 desc_num; u16 last_batch_head; u16 used_idx; DescStateSplit desc[]}}
 * with {@code DescStateSplit {u8 inflight; u8 pad[5]; u16 next; u64 counter}}, packed, little-endian. Queue
 * areas are {@code align_up(16 * queue_size + 16, 64)} bytes apart, as libvhost-user lays them out.
 *
 * <p>Packed virtqueues (negotiated VIRTIO_F_RING_PACKED when the area is created and mapped) use the packed queue
 * region instead ({@link PackedInflightArea}: a 32-byte header and a 32-byte {@code DescStatePacked} per entry,
 * {@code align_up(32 * queue_size + 32, 64)} bytes per queue, as DPDK's vhost library sizes it).
 *
 * <p>The front-end keeps the area across back-end restarts (GET_INFLIGHT_FD once, SET_INFLIGHT_FD on every
 * start), so a new back-end finds what its predecessor had taken and not yet used.
 */
public final class InflightRegion {

    static final int HEADER = 16;
    static final int DESC_STATE = 16;
    /** Offsets of {@code version} and {@code desc_num}, the same in the split and the packed queue regions. */
    static final int OFF_VERSION = 8;
    static final int OFF_DESC_NUM = 10;
    static final int OFF_LAST_BATCH_HEAD = 12;
    static final int OFF_USED_IDX = 14;
    /** Version written into a fresh queue area, split or packed (libvhost-user INFLIGHT_VERSION; 0: none yet). */
    static final int VERSION = 1;
    private static final int ALIGN = 64;

    private final int queueSize;
    /** Whether the queue regions have the packed layout ({@link PackedInflightArea}). */
    private final boolean packed;
    private final long mmapSize;
    private final List<ByteBuffer> queues;
    /** The mapping itself (the queues are slices of it), for {@link #unmap}. */
    private final MappedByteBuffer map;

    private InflightRegion(MappedByteBuffer map, int numQueues, int queueSize, boolean packed) {
        this.map = map;
        this.queueSize = queueSize;
        this.packed = packed;
        this.mmapSize = map.capacity();
        List<ByteBuffer> q = new ArrayList<>();
        long per = queueBytes(queueSize, packed);
        for (int i = 0; i < numQueues; i++) {
            q.add(map.slice((int) (i * per), (int) per).order(ByteOrder.LITTLE_ENDIAN));
        }
        this.queues = List.copyOf(q);
    }

    /** Bytes of one queue's area (libvhost-user vu_inflight_queue_size). */
    public static long queueBytes(int queueSize) {
        return queueBytes(HEADER, DESC_STATE, queueSize);
    }

    /** Bytes of a queue area of either layout: its header and one entry per descriptor, aligned up to 64. */
    static long queueBytes(int header, int entry, int queueSize) {
        long raw = header + (long) entry * queueSize;
        return (raw + ALIGN - 1) / ALIGN * ALIGN;
    }

    /** Bytes of one queue's area in the split or the packed layout. */
    public static long queueBytes(int queueSize, boolean packed) {
        return packed ? PackedInflightArea.queueBytes(queueSize) : queueBytes(queueSize);
    }

    /** Bytes of the whole area for {@code numQueues} queues of {@code queueSize}. */
    public static long totalBytes(int numQueues, int queueSize) {
        return queueBytes(queueSize) * numQueues;
    }

    /** Bytes of the whole area for {@code numQueues} queues of {@code queueSize} in the split or packed layout. */
    public static long totalBytes(int numQueues, int queueSize, boolean packed) {
        return queueBytes(queueSize, packed) * numQueues;
    }

    /** The created area and the descriptor to send with the GET_INFLIGHT_FD reply (close it afterwards). */
    record Created(InflightRegion region, RandomAccessFile file) {
        FileDescriptor fd() throws IOException {
            return file.getFD();
        }
    }

    /**
     * Creates a zeroed area (GET_INFLIGHT_FD). Java 17 cannot call memfd_create: the area is a file in
     * /dev/shm (the temporary directory when /dev/shm is missing), mapped shared and unlinked at once, so
     * only the open descriptor (sent to the front-end) and the mapping keep it alive.
     */
    static Created create(int numQueues, int queueSize) throws IOException {
        return create(numQueues, queueSize, false);
    }

    /** {@link #create(int, int)} in the split or the packed layout. */
    static Created create(int numQueues, int queueSize, boolean packed) throws IOException {
        Path dir = Path.of("/dev/shm");
        if (!Files.isDirectory(dir)) {
            dir = Path.of(System.getProperty("java.io.tmpdir"));
        }
        Path file = Files.createTempFile(dir, "kickplug-inflight-", ".shm");
        RandomAccessFile raf = null;
        try {
            raf = new RandomAccessFile(file.toFile(), "rw");
            long size = totalBytes(numQueues, queueSize, packed);
            raf.setLength(size);
            MappedByteBuffer map = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, size);
            InflightRegion region = new InflightRegion(map, numQueues, queueSize, packed);
            return new Created(region, raf);
        } catch (IOException | RuntimeException e) {
            if (raf != null) {
                raf.close();
            }
            throw e;
        } finally {
            Files.deleteIfExists(file);
        }
    }

    /**
     * Maps the area a front-end passed with SET_INFLIGHT_FD; the descriptor is closed (the mapping stays).
     * Sets each queue's desc_num to {@code queueSize}, as libvhost-user does.
     */
    static InflightRegion map(FileDescriptor fd, long mmapSize, long offset, int numQueues, int queueSize)
            throws IOException {
        return map(fd, mmapSize, offset, numQueues, queueSize, false);
    }

    /** {@link #map(FileDescriptor, long, long, int, int)} in the split or the packed layout. */
    static InflightRegion map(FileDescriptor fd, long mmapSize, long offset, int numQueues, int queueSize,
            boolean packed) throws IOException {
        try {
            int n = Fds.number(fd);
            try (FileChannel ch = FileChannel.open(Path.of("/proc/self/fd/" + n), StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                if (Long.compareUnsigned(offset + mmapSize, ch.size()) > 0) {
                    throw new IOException(String.format("the area needs bytes up to 0x%x of its file, which has 0x%x",
                            offset + mmapSize, ch.size()));
                }
                MappedByteBuffer map = ch.map(FileChannel.MapMode.READ_WRITE, offset, mmapSize);
                InflightRegion r = new InflightRegion(map, numQueues, queueSize, packed);
                for (ByteBuffer q : r.queues) {
                    // desc_num is at offset 10 in both layouts.
                    q.putShort(OFF_DESC_NUM, (short) queueSize);
                }
                return r;
            }
        } finally {
            Fds.close(fd);
        }
    }

    int queueCount() {
        return queues.size();
    }

    int queueSize() {
        return queueSize;
    }

    /** Whether the area has the packed layout (it was created or mapped while VIRTIO_F_RING_PACKED was acked). */
    boolean packed() {
        return packed;
    }

    long mmapSize() {
        return mmapSize;
    }

    /** Queue {@code q}'s area (shared; one I/O thread writes it at a time). */
    ByteBuffer queue(int q) {
        return queues.get(q);
    }

    /**
     * Unmaps the area in this process at once (see {@link Unmapper}); the area itself lives on in the
     * front-end, which passes it again with SET_INFLIGHT_FD after a reconnect. Only once no queue uses it.
     */
    boolean unmap() {
        return Unmapper.unmap(map);
    }
}
