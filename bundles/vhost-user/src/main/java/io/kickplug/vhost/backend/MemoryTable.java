package io.kickplug.vhost.backend;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.memory.MemoryRegion;
import io.kickplug.vhost.protocol.Fds;
import java.io.FileDescriptor;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The front-end's memory regions (vhost-user SET_MEM_TABLE / ADD_MEM_REG / REM_MEM_REG), each mapped from
 * the file descriptor that came with it, and the translation of front-end virtual addresses (ring
 * addresses) to guest physical addresses. Regions never overlap, neither in guest physical nor in
 * front-end virtual addresses. Not thread-safe: the connection's message thread owns it.
 */
final class MemoryTable {

    /** Chunk size for regions that do not fit in one ByteBuffer (a power of two, as guest memory wants). */
    static final long CHUNK = 1L << 30;

    /** One mapped region. */
    record Region(long guestAddress, long size, long userAddress, long mmapOffset, List<ByteBuffer> chunks) {

        boolean sameIdentity(long gpa, long len, long uva) {
            return guestAddress == gpa && size == len && userAddress == uva;
        }

        /**
         * Unmaps every chunk at once (see {@link Unmapper}); only once nothing uses the region's memory.
         *
         * @return chunks unmapped now (the others are left to the garbage collector)
         */
        int unmap() {
            int n = 0;
            for (ByteBuffer chunk : chunks) {
                if (chunk instanceof MappedByteBuffer mapped && Unmapper.unmap(mapped)) {
                    n++;
                }
            }
            return n;
        }

        @Override
        public String toString() {
            return String.format("[gpa 0x%x size 0x%x uva 0x%x offset 0x%x]", guestAddress, size, userAddress,
                    mmapOffset);
        }
    }

    private final List<Region> regions = new ArrayList<>();

    List<Region> regions() {
        return List.copyOf(regions);
    }

    int count() {
        return regions.size();
    }

    long totalBytes() {
        return regions.stream().mapToLong(Region::size).sum();
    }

    /**
     * Checks a region description on its own: non-empty, no wrap-around of any of its three address ranges.
     *
     * @return an error text, or {@code null} when it is sound
     */
    static String checkShape(long gpa, long size, long uva, long offset) {
        if (size == 0) {
            return "region has size 0";
        }
        if (Long.compareUnsigned(gpa + size - 1, gpa) < 0) {
            return String.format("region at guest address 0x%x with size 0x%x passes 2^64", gpa, size);
        }
        if (Long.compareUnsigned(uva + size - 1, uva) < 0) {
            return String.format("region at user address 0x%x with size 0x%x passes 2^64", uva, size);
        }
        if (offset < 0 || size < 0 || offset + size < 0) {
            return String.format("region mmap offset 0x%x + size 0x%x is beyond a file's reach", offset, size);
        }
        return null;
    }

    /** An error text when {@code [gpa, +size)} or {@code [uva, +size)} overlaps a region of {@code others}. */
    static String overlap(List<Region> others, long gpa, long size, long uva) {
        for (Region r : others) {
            if (overlaps(r.guestAddress(), r.size(), gpa, size)) {
                return String.format("guest addresses [0x%x, +0x%x) overlap region %s", gpa, size, r);
            }
            if (overlaps(r.userAddress(), r.size(), uva, size)) {
                return String.format("user addresses [0x%x, +0x%x) overlap region %s", uva, size, r);
            }
        }
        return null;
    }

    private static boolean overlaps(long aStart, long aSize, long bStart, long bSize) {
        long aLast = aStart + aSize - 1;
        long bLast = bStart + bSize - 1;
        return Long.compareUnsigned(aStart, bLast) <= 0 && Long.compareUnsigned(bStart, aLast) <= 0;
    }

    /** Maps a checked region read from a message (no chunks yet): {@link #map(FileDescriptor, long, long, long, long)}. */
    static Region map(FileDescriptor fd, Region checked) throws IOException {
        return map(fd, checked.guestAddress(), checked.size(), checked.userAddress(), checked.mmapOffset());
    }

    /**
     * Maps {@code size} bytes of the file behind {@code fd} from {@code offset}, shared and read-write. The
     * descriptor is closed either way (the mapping keeps the memory alive).
     *
     * @throws IOException when the file cannot be reopened or mapped, or is shorter than offset + size
     */
    static Region map(FileDescriptor fd, long gpa, long size, long uva, long offset) throws IOException {
        try {
            int n = Fds.number(fd);
            // memfd and regular files can be reopened through /proc (build-facts: memfd mapping).
            try (FileChannel ch = FileChannel.open(Path.of("/proc/self/fd/" + n), StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                long fileSize = ch.size();
                if (Long.compareUnsigned(offset + size, fileSize) > 0) {
                    throw new IOException(String.format("region needs bytes up to 0x%x of its file, which has 0x%x",
                            offset + size, fileSize));
                }
                List<ByteBuffer> chunks = new ArrayList<>();
                try {
                    if (size <= Integer.MAX_VALUE) {
                        chunks.add(ch.map(FileChannel.MapMode.READ_WRITE, offset, size));
                    } else {
                        for (long at = 0; at < size; at += CHUNK) {
                            chunks.add(ch.map(FileChannel.MapMode.READ_WRITE, offset + at,
                                    Math.min(CHUNK, size - at)));
                        }
                    }
                } catch (IOException | RuntimeException e) {
                    // Nobody has seen the chunks mapped so far: unmap them now rather than when the GC runs.
                    new Region(gpa, size, uva, offset, chunks).unmap();
                    throw e;
                }
                return new Region(gpa, size, uva, offset, List.copyOf(chunks));
            }
        } finally {
            Fds.close(fd);
        }
    }

    void add(Region r) {
        regions.add(r);
        regions.sort(Comparator.comparing(Region::guestAddress, Long::compareUnsigned));
    }

    /** Removes the region with that identity and returns it (to unmap), or {@code null} when there is none. */
    Region remove(long gpa, long size, long uva) {
        for (int i = 0; i < regions.size(); i++) {
            if (regions.get(i).sameIdentity(gpa, size, uva)) {
                return regions.remove(i);
            }
        }
        return null;
    }

    /** Removes every region and returns them (to unmap). */
    List<Region> clear() {
        List<Region> all = List.copyOf(regions);
        regions.clear();
        return all;
    }

    /** Guest memory over the current regions, or {@code null} when there are none. */
    GuestMemory build(GuestMemoryFactory factory) {
        if (regions.isEmpty()) {
            return null;
        }
        List<MemoryRegion> layout = new ArrayList<>();
        List<List<ByteBuffer>> chunks = new ArrayList<>();
        for (Region r : regions) {
            layout.add(new MemoryRegion(r.guestAddress(), r.size()));
            chunks.add(r.chunks());
        }
        return factory.wrap(layout, chunks);
    }

    /**
     * Translates front-end virtual addresses {@code [uva, uva + length)} to a guest physical address; the
     * whole range must lie in one region.
     *
     * @return the guest physical address, or -1 when no region holds the whole range
     */
    long translate(long uva, long length) {
        for (Region r : regions) {
            long off = uva - r.userAddress();
            if (Long.compareUnsigned(uva, r.userAddress()) >= 0 && Long.compareUnsigned(off, r.size()) < 0
                    && Long.compareUnsigned(length, r.size() - off) <= 0) {
                return r.guestAddress() + off;
            }
        }
        return -1;
    }
}
