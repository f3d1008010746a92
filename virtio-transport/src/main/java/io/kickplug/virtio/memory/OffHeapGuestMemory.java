package io.kickplug.virtio.memory;

import io.kickplug.api.memory.AddressOverflowException;
import io.kickplug.api.memory.BufferViews;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.InvalidGuestAddressException;
import io.kickplug.api.memory.MemoryRegion;
import io.kickplug.api.memory.PartialBufferException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * Guest memory over direct (off-heap or memory-mapped) byte buffers, one or more regions, each region
 * split into chunks of a power-of-two size so regions over 2 GiB work.
 *
 * <p>Every access is bounds-checked before it touches memory; there is no switch to turn the checks off.
 * Ordered accessors use {@link VarHandle} views with acquire/release semantics; they need aligned
 * addresses and fall back to a plain access framed by fences when an address is misaligned (a guest may
 * misplace a ring on purpose; the queue setup rejects that, but memory stays correct regardless).
 */
public final class OffHeapGuestMemory implements GuestMemory {

    /** Default chunk: 1 GiB. */
    public static final int DEFAULT_CHUNK_SHIFT = 30;

    private static final VarHandle SHORT = MethodHandles.byteBufferViewVarHandle(short[].class,
            ByteOrder.LITTLE_ENDIAN);
    private static final VarHandle INT = MethodHandles.byteBufferViewVarHandle(int[].class,
            ByteOrder.LITTLE_ENDIAN);

    private static final class Region {
        final long start;
        final long size;
        final ByteBuffer[] chunks;
        final int shift;
        final long mask;

        Region(long start, long size, ByteBuffer[] chunks, int shift) {
            this.start = start;
            this.size = size;
            this.chunks = chunks;
            this.shift = shift;
            this.mask = (1L << shift) - 1;
        }

        /** True when {@code address} lies in this region (unsigned). */
        boolean contains(long address) {
            long off = address - start;
            return Long.compareUnsigned(address, start) >= 0 && Long.compareUnsigned(off, size) < 0;
        }
    }

    private final Region[] regions;
    /**
     * The one region's one chunk when the memory is a single region in a single buffer (a vhost-user front-end's
     * usual table, an in-process guest's RAM), else {@code null}: the ring and header accessors then check one
     * unsigned range and index that buffer, without the region search of {@link #check}.
     */
    private final ByteBuffer flat;
    private final long flatStart;
    private final long flatSize;
    private final List<MemoryRegion> layout;
    private final long totalSize;

    private OffHeapGuestMemory(Region[] regions) {
        this.regions = regions;
        // At least 8 bytes, so that size - width (width <= 8) cannot wrap in the unsigned range tests below.
        boolean single = regions.length == 1 && regions[0].chunks.length == 1 && regions[0].size >= Long.BYTES;
        this.flat = single ? regions[0].chunks[0] : null;
        this.flatStart = single ? regions[0].start : 0;
        this.flatSize = single ? regions[0].size : 0;
        List<MemoryRegion> l = new ArrayList<>();
        long total = 0;
        for (Region r : regions) {
            l.add(new MemoryRegion(r.start, r.size));
            total += r.size;
        }
        this.layout = List.copyOf(l);
        this.totalSize = total;
    }

    /** Allocates one zeroed region of {@code size} bytes at guest address 0. */
    public static OffHeapGuestMemory allocate(long size) {
        return allocate(List.of(new MemoryRegion(0, size)), DEFAULT_CHUNK_SHIFT);
    }

    /** Allocates zeroed regions; {@code chunkShift} sets the chunk size (tests use small chunks). */
    public static OffHeapGuestMemory allocate(List<MemoryRegion> layout, int chunkShift) {
        if (chunkShift < 3 || chunkShift > 30) {
            throw new IllegalArgumentException("chunk shift must be 3..30: " + chunkShift);
        }
        List<List<ByteBuffer>> chunks = new ArrayList<>();
        for (MemoryRegion r : layout) {
            List<ByteBuffer> list = new ArrayList<>();
            long left = r.size();
            while (left > 0) {
                int n = (int) Math.min(left, 1L << chunkShift);
                list.add(zeroedChunk(n));
                left -= n;
            }
            chunks.add(list);
        }
        return wrap(layout, chunks);
    }

    /**
     * A zeroed direct buffer whose pages become resident only when touched: a shared mapping of a file in
     * /dev/shm (tmpfs) that is deleted at once, so nothing is left behind even if the process dies. A
     * simulated guest uses a few MiB of its 64 MiB, so a disk costs that much resident memory rather than
     * all of it ({@code allocateDirect} zeroes, and so touches, every page; it also counts against
     * -XX:MaxDirectMemorySize). Falls back to {@code allocateDirect} where there is no /dev/shm.
     */
    private static ByteBuffer zeroedChunk(int bytes) {
        Path shm = Path.of("/dev/shm");
        if (Files.isDirectory(shm) && Files.isWritable(shm)) {
            Path file = null;
            try {
                file = Files.createTempFile(shm, "kickplug-guest-", ".mem");
                try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
                    // Mapping grows the file to the size (a hole: zeroes, nothing allocated). The mapping outlives
                    // the channel and the file's name; the pages go when the buffer is freed.
                    return ch.map(FileChannel.MapMode.READ_WRITE, 0, bytes);
                }
            } catch (IOException | UnsupportedOperationException e) {
                // fall back below
            } finally {
                if (file != null) {
                    try {
                        Files.deleteIfExists(file);
                    } catch (IOException e) {
                        // a leftover zero-length file in /dev/shm; nothing to do about it here
                    }
                }
            }
        }
        return ByteBuffer.allocateDirect(bytes);
    }

    /**
     * Wraps existing direct buffers. Within a region every chunk but the last must have the same
     * power-of-two capacity, and the capacities must sum to the region size.
     */
    public static OffHeapGuestMemory wrap(List<MemoryRegion> layout, List<List<ByteBuffer>> chunks) {
        Objects.requireNonNull(layout, "layout");
        if (layout.isEmpty()) {
            throw new IllegalArgumentException("guest memory needs at least one region");
        }
        if (layout.size() != chunks.size()) {
            throw new IllegalArgumentException("one chunk list per region expected");
        }
        List<MemoryRegion> sorted = new ArrayList<>(layout);
        Region[] regions = new Region[layout.size()];
        for (int i = 0; i < layout.size(); i++) {
            MemoryRegion r = layout.get(i);
            List<ByteBuffer> list = chunks.get(i);
            if (list.isEmpty()) {
                throw new IllegalArgumentException("region " + i + " has no buffers");
            }
            int first = list.get(0).capacity();
            int shift = 31 - Integer.numberOfLeadingZeros(first);
            long sum = 0;
            ByteBuffer[] arr = new ByteBuffer[list.size()];
            for (int c = 0; c < arr.length; c++) {
                ByteBuffer b = list.get(c);
                if (!b.isDirect()) {
                    throw new IllegalArgumentException("guest memory buffers must be direct");
                }
                if (c < arr.length - 1 && (b.capacity() != first || Integer.bitCount(first) != 1)) {
                    throw new IllegalArgumentException("region " + i + ": every chunk but the last must have the"
                            + " same power-of-two capacity");
                }
                if (c == arr.length - 1 && arr.length > 1 && b.capacity() > first) {
                    throw new IllegalArgumentException("region " + i + ": last chunk larger than the others");
                }
                arr[c] = b.duplicate().clear().order(ByteOrder.LITTLE_ENDIAN);
                sum += b.capacity();
            }
            if (arr.length == 1) {
                // A single chunk of any size: use a shift that covers it whole.
                shift = 31;
            }
            if (sum != r.size()) {
                throw new IllegalArgumentException("region " + i + ": buffers hold " + sum + " bytes, region size is "
                        + r.size());
            }
            regions[i] = new Region(r.guestAddress(), r.size(), arr, shift);
        }
        java.util.Arrays.sort(regions, (a, b) -> Long.compareUnsigned(a.start, b.start));
        sorted.sort((a, b) -> Long.compareUnsigned(a.guestAddress(), b.guestAddress()));
        for (int i = 1; i < regions.length; i++) {
            Region prev = regions[i - 1];
            if (Long.compareUnsigned(regions[i].start, prev.start + prev.size - 1) <= 0) {
                throw new IllegalArgumentException("memory regions overlap at 0x" + Long.toHexString(regions[i].start));
            }
        }
        return new OffHeapGuestMemory(regions);
    }

    @Override
    public List<MemoryRegion> regions() {
        return layout;
    }

    @Override
    public long totalSize() {
        return totalSize;
    }

    private Region find(long address) {
        Region[] rs = regions;
        if (rs.length == 1) {
            return rs[0].contains(address) ? rs[0] : null;
        }
        int lo = 0;
        int hi = rs.length - 1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            Region r = rs[mid];
            if (Long.compareUnsigned(address, r.start) < 0) {
                hi = mid - 1;
            } else if (r.contains(address)) {
                return r;
            } else {
                lo = mid + 1;
            }
        }
        return null;
    }

    /** Validates the range and returns the region of its first byte. */
    private Region check(long address, long length) {
        if (length < 0 || (length > 0 && Long.compareUnsigned(address + length - 1, address) < 0)) {
            throw new AddressOverflowException(address, length);
        }
        Region r = find(address);
        if (r == null) {
            throw new InvalidGuestAddressException(address);
        }
        long inRegion = r.size - (address - r.start);
        if (length <= inRegion) {
            return r;
        }
        // Crosses into the following regions: they must be adjacent.
        long done = inRegion;
        long cur = address + inRegion;
        while (done < length) {
            Region next = find(cur);
            if (next == null) {
                throw new PartialBufferException(address, length, done);
            }
            long n = Math.min(next.size, length - done);
            done += n;
            cur += n;
        }
        return r;
    }

    @Override
    public void checkRange(long address, long length) {
        if (length == 0) {
            return;
        }
        check(address, length);
    }

    @Override
    public boolean isValidRange(long address, long length) {
        if (length == 0) {
            return true;
        }
        if (flat != null && length > 0) {
            // One region: [address, address + length) inside it, unsigned, without overflow.
            long fo = address - flatStart;
            return Long.compareUnsigned(fo, flatSize) < 0 && length <= flatSize - fo;
        }
        try {
            check(address, length);
            return true;
        } catch (RuntimeException e) {
            return false;
        }
    }

    /** True when [address, address+width) lies in one chunk of {@code r}. */
    private static boolean inOneChunk(Region r, long off, int width) {
        return ((off & r.mask) + width) <= (r.mask + 1) || r.chunks.length == 1;
    }

    private static ByteBuffer chunk(Region r, long off) {
        return r.chunks[(int) (off >>> r.shift)];
    }

    private static int index(Region r, long off) {
        return (int) (off & r.mask);
    }

    @Override
    public byte readU8(long address) {
        ByteBuffer f = flat;
        long fo = address - flatStart;
        if (f != null && Long.compareUnsigned(fo, flatSize) < 0) {
            return f.get((int) fo);
        }
        Region r = check(address, 1);
        long off = address - r.start;
        return chunk(r, off).get(index(r, off));
    }

    @Override
    public void writeU8(long address, byte value) {
        ByteBuffer f = flat;
        long fo = address - flatStart;
        if (f != null && Long.compareUnsigned(fo, flatSize) < 0) {
            f.put((int) fo, value);
            return;
        }
        Region r = check(address, 1);
        long off = address - r.start;
        chunk(r, off).put(index(r, off), value);
    }

    /** Reads {@code width} bytes little-endian, byte by byte (for ranges crossing chunks or regions). */
    private long readSlow(long address, int width) {
        long v = 0;
        for (int i = 0; i < width; i++) {
            v |= (readU8(address + i) & 0xffL) << (8 * i);
        }
        return v;
    }

    private void writeSlow(long address, int width, long value) {
        for (int i = 0; i < width; i++) {
            writeU8(address + i, (byte) (value >>> (8 * i)));
        }
    }

    /**
     * One access of {@code width} (2, 4 or 8) bytes at index {@code i} of one little-endian buffer, an acquire
     * load when {@code acquire} (2 and 4 bytes only, aligned: the callers check). Static and small, so the JIT
     * inlines it into {@link #load}'s two fast paths: no extra call per access.
     */
    private static long get(ByteBuffer b, int i, int width, boolean acquire) {
        return switch (width) {
            case 2 -> acquire ? (short) SHORT.getAcquire(b, i) : b.getShort(i);
            case 4 -> acquire ? (int) INT.getAcquire(b, i) : b.getInt(i);
            default -> b.getLong(i);
        };
    }

    /**
     * Stores {@code width} bytes at index {@code i} of one little-endian buffer, as {@link #get} loads them: a
     * release store when {@code release} (2 and 4 bytes only, aligned). Inlined into {@link #store} likewise.
     */
    private static void put(ByteBuffer b, int i, int width, long value, boolean release) {
        switch (width) {
            case 2 -> {
                if (release) {
                    SHORT.setRelease(b, i, (short) value);
                } else {
                    b.putShort(i, (short) value);
                }
            }
            case 4 -> {
                if (release) {
                    INT.setRelease(b, i, (int) value);
                } else {
                    b.putInt(i, (int) value);
                }
            }
            default -> b.putLong(i, value);
        }
    }

    /**
     * Loads {@code width} (2, 4 or 8) bytes little-endian. In one chunk it is a single access (with acquire
     * semantics when {@code acquire}, which needs an aligned address); across chunks or regions, or
     * misaligned for an acquire, it reads byte by byte and an acquire fence follows, so later loads are not
     * ordered before it either way.
     */
    private long load(long address, int width, boolean acquire) {
        ByteBuffer f = flat;
        long fo = address - flatStart;
        // One buffer: [address, address + width) lies inside it when 0 <= fo <= size - width, unsigned (flat is set
        // only for a region of at least 8 bytes, so size - width does not wrap); anything else takes the checked
        // path below, which throws the precise exception.
        if (f != null && Long.compareUnsigned(fo, flatSize - width) <= 0
                && (!acquire || (address & (width - 1)) == 0)) {
            return get(f, (int) fo, width, acquire);
        }
        Region r = check(address, width);
        long off = address - r.start;
        if ((!acquire || (address & (width - 1)) == 0) && inOneChunk(r, off, width) && off + width <= r.size) {
            return get(chunk(r, off), index(r, off), width, acquire);
        }
        long v = readSlow(address, width);
        if (acquire) {
            VarHandle.acquireFence(); // the byte-wise read stands for one acquire load
        }
        return v;
    }

    /**
     * Stores {@code width} (2, 4 or 8) bytes little-endian; with {@code release}, earlier stores are
     * visible before it (a release store in one aligned chunk, else a release fence then byte stores).
     */
    private void store(long address, int width, long value, boolean release) {
        ByteBuffer f = flat;
        long fo = address - flatStart;
        if (f != null && Long.compareUnsigned(fo, flatSize - width) <= 0
                && (!release || (address & (width - 1)) == 0)) { // one buffer, as in load()
            put(f, (int) fo, width, value, release);
            return;
        }
        Region r = check(address, width);
        long off = address - r.start;
        if ((!release || (address & (width - 1)) == 0) && inOneChunk(r, off, width) && off + width <= r.size) {
            put(chunk(r, off), index(r, off), width, value, release);
            return;
        }
        if (release) {
            VarHandle.releaseFence(); // earlier stores before any byte of this one
        }
        writeSlow(address, width, value);
    }

    @Override
    public short readU16(long address) {
        return (short) load(address, Short.BYTES, false);
    }

    @Override
    public short readU16Acquire(long address) {
        return (short) load(address, Short.BYTES, true);
    }

    @Override
    public void writeU16(long address, short value) {
        store(address, Short.BYTES, value, false);
    }

    @Override
    public void writeU16Release(long address, short value) {
        store(address, Short.BYTES, value, true);
    }

    @Override
    public int readU32(long address) {
        return (int) load(address, Integer.BYTES, false);
    }

    @Override
    public int readU32Acquire(long address) {
        return (int) load(address, Integer.BYTES, true);
    }

    @Override
    public void writeU32(long address, int value) {
        store(address, Integer.BYTES, value, false);
    }

    @Override
    public void writeU32Release(long address, int value) {
        store(address, Integer.BYTES, value, true);
    }

    @Override
    public long readU64(long address) {
        return load(address, Long.BYTES, false);
    }

    @Override
    public void writeU64(long address, long value) {
        store(address, Long.BYTES, value, false);
    }

    /** Visits each contiguous piece of an already checked range. */
    private interface Piece {
        void accept(ByteBuffer chunk, int index, int length, long done);
    }

    /**
     * Bytes from {@code off} in {@code r} that lie in one buffer: up to the end of its chunk (of the region when it
     * has one chunk), at most {@code left} and at most {@link Integer#MAX_VALUE}.
     */
    private static int pieceLength(Region r, long off, long left) {
        long chunkLeft = r.chunks.length == 1 ? r.size - off : (r.mask + 1) - (off & r.mask);
        chunkLeft = Math.min(chunkLeft, r.size - off);
        return (int) Math.min(Math.min(chunkLeft, left), Integer.MAX_VALUE);
    }

    private void forEachPiece(long address, long length, Piece piece) {
        check(address, length);
        long done = 0;
        while (done < length) {
            long cur = address + done;
            Region r = find(cur);
            long off = cur - r.start;
            int n = pieceLength(r, off, length - done);
            piece.accept(chunk(r, off), index(r, off), n, done);
            done += n;
        }
    }

    @Override
    public void read(long address, byte[] dst, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, dst.length);
        forEachPiece(address, length, (c, i, n, done) -> c.get(i, dst, offset + (int) done, n));
    }

    @Override
    public void write(long address, byte[] src, int offset, int length) {
        Objects.checkFromIndexSize(offset, length, src.length);
        forEachPiece(address, length, (c, i, n, done) -> c.put(i, src, offset + (int) done, n));
    }

    @Override
    public void read(long address, ByteBuffer dst) {
        int len = dst.remaining();
        forEachPiece(address, len, (c, i, n, done) -> dst.put(c.slice(i, n)));
    }

    @Override
    public void write(long address, ByteBuffer src) {
        int len = src.remaining();
        forEachPiece(address, len, (c, i, n, done) -> {
            ByteBuffer part = src.slice(src.position(), n);
            c.put(i, part, 0, n);
            src.position(src.position() + n);
        });
    }

    private static final byte[] ZEROES = new byte[64 * 1024];

    @Override
    public void fill(long address, long length, byte value) {
        byte[] pattern = value == 0 ? ZEROES : filled(value);
        forEachPiece(address, length, (c, i, n, done) -> {
            int left = n;
            int at = i;
            while (left > 0) {
                int k = Math.min(left, pattern.length);
                c.put(at, pattern, 0, k);
                at += k;
                left -= k;
            }
        });
    }

    private static byte[] filled(byte value) {
        byte[] b = new byte[64 * 1024];
        java.util.Arrays.fill(b, value);
        return b;
    }

    @Override
    public ByteBuffer[] views(long address, long length) {
        List<ByteBuffer> out = new ArrayList<>(1);
        forEachPiece(address, length, (c, i, n, done) -> out.add(c.slice(i, n).order(ByteOrder.LITTLE_ENDIAN)));
        return out.toArray(new ByteBuffer[0]);
    }

    /** Reuses {@code into}'s duplicates of this memory's chunks: no allocation once they exist. */
    @Override
    public void viewsInto(long address, long length, BufferViews into) {
        check(address, length);
        long done = 0;
        while (done < length) {
            long cur = address + done;
            Region r = find(cur);
            long off = cur - r.start;
            int n = pieceLength(r, off, length - done);
            into.addRange(chunk(r, off), index(r, off), n);
            done += n;
        }
    }

    @Override
    public void fullFence() {
        VarHandle.fullFence();
    }

    @Override
    public String toString() {
        return "OffHeapGuestMemory" + layout;
    }
}
