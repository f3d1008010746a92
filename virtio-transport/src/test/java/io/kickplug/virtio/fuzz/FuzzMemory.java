package io.kickplug.virtio.fuzz;

import io.kickplug.api.memory.MemoryRegion;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.SplittableRandom;

/**
 * The guest memory every fuzz input runs in, built once and restored before each input, with a shadow
 * copy that tracks the writes the harness allows, so that any other write shows up as a difference.
 *
 * <p>Layout (guest physical):
 * <ul>
 * <li>A {@code [0x0000, 0x4000)}: four 4 KiB chunks, where valid rings live;
 * <li>a hole {@code [0x4000, 0x8000)};
 * <li>B {@code [0x8000, 0x9000)} (two 2 KiB chunks) directly followed by C {@code [0x9000, 0xa000)}, so
 * buffers may cross a chunk and a region boundary;
 * <li>a hole up to 4 GiB;
 * <li>D {@code [2^32, 2^33 + 64 KiB)}: a region whose 64 KiB chunks all alias one buffer, big enough for
 * buffers of length 0xffffffff and for chains longer than 2^32 bytes (section 2.7.5.2).
 * </ul>
 * Its contents start as a fixed pseudo-random pattern, so descriptors the input does not set are garbage.
 */
final class FuzzMemory {
    static final long A = 0;
    static final long A_END = 0x4000;
    static final long B = 0x8000;
    static final long C = 0x9000;
    static final long C_END = 0xa000;
    static final long D = 1L << 32;
    static final int D_CHUNK = 1 << 16;
    static final long D_END = D + (1L << 32) + D_CHUNK;

    /** One piece of real memory: guest range {@code [start, start + span)} maps onto {@code buf} modulo its size. */
    private static final class Backing {
        final long start;
        final long span;
        final ByteBuffer buf;
        final byte[] base;
        final byte[] shadow;

        Backing(long start, long span, ByteBuffer buf, byte[] base) {
            this.start = start;
            this.span = span;
            this.buf = buf;
            this.base = base;
            this.shadow = new byte[base.length];
        }

        boolean contains(long address) {
            return Long.compareUnsigned(address - start, span) < 0 && Long.compareUnsigned(address, start) >= 0;
        }

        int offset(long address) {
            return (int) ((address - start) % base.length);
        }
    }

    final OffHeapGuestMemory memory;
    private final List<Backing> backings = new ArrayList<>();

    FuzzMemory() {
        SplittableRandom rnd = new SplittableRandom(0x6b69636b706c7567L);
        List<MemoryRegion> layout = new ArrayList<>();
        List<List<ByteBuffer>> chunks = new ArrayList<>();
        layout.add(new MemoryRegion(A, A_END - A));
        chunks.add(real(rnd, A, 4096, 4));
        layout.add(new MemoryRegion(B, C - B));
        chunks.add(real(rnd, B, 2048, 2));
        layout.add(new MemoryRegion(C, C_END - C));
        chunks.add(real(rnd, C, 4096, 1));
        ByteBuffer alias = ByteBuffer.allocateDirect(D_CHUNK);
        backings.add(new Backing(D, D_END - D, alias, randomBytes(rnd, D_CHUNK)));
        layout.add(new MemoryRegion(D, D_END - D));
        chunks.add(Collections.nCopies((int) ((D_END - D) / D_CHUNK), alias));
        memory = OffHeapGuestMemory.wrap(layout, chunks);
    }

    private List<ByteBuffer> real(SplittableRandom rnd, long start, int chunk, int count) {
        List<ByteBuffer> list = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ByteBuffer b = ByteBuffer.allocateDirect(chunk);
            backings.add(new Backing(start + (long) i * chunk, chunk, b, randomBytes(rnd, chunk)));
            list.add(b);
        }
        return list;
    }

    private static byte[] randomBytes(SplittableRandom rnd, int n) {
        byte[] b = new byte[n];
        for (int i = 0; i < n; i++) {
            b[i] = (byte) rnd.nextInt(256);
        }
        return b;
    }

    /** Independent of OffHeapGuestMemory: true when {@code [address, address + length)} is all guest memory. */
    static boolean inside(long address, long length) {
        if (length == 0) {
            return true;
        }
        long last = address + length - 1;
        if (Long.compareUnsigned(last, address) < 0) {
            return false; // wraps past 2^64
        }
        return within(address, last, A, A_END) || within(address, last, B, C_END) || within(address, last, D, D_END);
    }

    private static boolean within(long first, long last, long start, long end) {
        return Long.compareUnsigned(first, start) >= 0 && Long.compareUnsigned(last, end) < 0;
    }

    /** True when {@code address} lies in region A, B or C (real memory, not the aliased region D). */
    static boolean inRealMemory(long address, long length) {
        long last = address + length - 1;
        return length > 0 && Long.compareUnsigned(last, address) >= 0
                && (within(address, last, A, A_END) || within(address, last, B, C_END));
    }

    /** Restores the base pattern into memory and the shadow. */
    void reset() {
        for (Backing b : backings) {
            b.buf.put(0, b.base);
            System.arraycopy(b.base, 0, b.shadow, 0, b.base.length);
        }
    }

    /** Makes the shadow equal to memory (after the driver set up its rings). */
    void snapshot() {
        for (Backing b : backings) {
            b.buf.get(0, b.shadow);
        }
    }

    /** Records an allowed write of one byte at {@code address} in the shadow. */
    void allow(long address, byte value) {
        for (Backing b : backings) {
            if (b.contains(address)) {
                b.shadow[b.offset(address)] = value;
                return;
            }
        }
        throw new AssertionError("harness wrote outside memory at 0x" + Long.toHexString(address));
    }

    /** A driver store: goes to memory and to the shadow. */
    void driverWriteU16(long address, int value) {
        memory.writeU16(address, (short) value);
        allow(address, (byte) value);
        allow(address + 1, (byte) (value >>> 8));
    }

    /**
     * Compares memory with the shadow, ignoring guest bytes in {@code [exclude, exclude + excludeLen)} (the
     * used ring, which the device owns). Returns a description of the first difference, or null.
     */
    String firstUnexpectedWrite(long exclude, long excludeLen) {
        for (Backing b : backings) {
            byte[] now = new byte[b.base.length];
            b.buf.get(0, now);
            int from = 0;
            while (true) {
                int diff = java.util.Arrays.mismatch(now, from, now.length, b.shadow, from, now.length);
                if (diff < 0) {
                    break;
                }
                int at = from + diff;
                long address = b.start + at;
                boolean excluded = b.span == b.base.length && Long.compareUnsigned(address - exclude, excludeLen) < 0
                        && Long.compareUnsigned(address, exclude) >= 0;
                if (!excluded) {
                    return String.format("guest byte 0x%x changed from 0x%02x to 0x%02x", address, b.shadow[at] & 0xff,
                            now[at] & 0xff);
                }
                from = at + 1;
                if (from >= now.length) {
                    break;
                }
            }
        }
        return null;
    }
}
