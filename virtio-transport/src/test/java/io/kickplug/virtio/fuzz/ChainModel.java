package io.kickplug.virtio.fuzz;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.virtio.testkit.RawRing;
import java.util.ArrayList;
import java.util.List;

/**
 * An independent reading of the chain rules of VIRTIO 1.2 sections 2.7.4-2.7.5.3, written from the spec
 * rather than from SplitDeviceQueue: walks the chain at {@code head} and says whether a device may accept
 * it and, if so, which buffers it consists of. The fuzz test holds the device queue to it.
 */
final class ChainModel {
    /** A buffer of the chain. */
    record Buf(long addr, long len, boolean writable) {
    }

    /** Either {@code buffers} (a valid chain) or {@code violation} (why a device must refuse it). */
    record Walk(List<Buf> buffers, String violation, int indirectEntries) {
        boolean valid() {
            return violation == null;
        }

        long bytes(boolean writable) {
            long n = 0;
            for (Buf b : buffers) {
                if (b.writable() == writable) {
                    n += b.len();
                }
            }
            return n;
        }
    }

    /** The device's own limit on indirect table entries (it may refuse longer tables; 2.7.5.3.1 has none). */
    static final int MAX_INDIRECT = 32768;

    private ChainModel() {
    }

    private static Walk invalid(String why) {
        return new Walk(List.of(), why, 0);
    }

    static Walk walk(GuestMemory m, long descTable, int size, int head, boolean indirectNegotiated) {
        List<Buf> bufs = new ArrayList<>();
        long table = descTable;
        int tableSize = size;
        boolean inIndirect = false;
        int indirectEntries = 0;
        boolean seenWritable = false;
        long total = 0;
        int visited = 0;
        int i = head;
        while (true) {
            // 2.7.5.2: no loops, at most queue-size descriptors; 2.7.5.3.1 likewise inside an indirect table.
            if (++visited > tableSize) {
                return invalid("loop or longer than its table");
            }
            long d = table + 16L * i;
            long addr = m.readU64(d);
            long len = m.readU32(d + 8) & 0xffffffffL;
            int flags = m.readU16(d + 12) & 0xffff;
            int next = m.readU16(d + 14) & 0xffff;
            if ((flags & RawRing.INDIRECT) != 0) {
                // 2.7.5.3.1: only with the feature, never nested, never with NEXT; a table of whole entries.
                if (!indirectNegotiated) {
                    return invalid("INDIRECT not negotiated");
                }
                if (inIndirect) {
                    return invalid("nested indirect");
                }
                if ((flags & RawRing.NEXT) != 0) {
                    return invalid("INDIRECT with NEXT");
                }
                if (len == 0 || len % 16 != 0 || len / 16 > MAX_INDIRECT) {
                    return invalid("bad indirect table length " + len);
                }
                if (!FuzzMemory.inside(addr, len)) {
                    return invalid("indirect table outside memory");
                }
                table = addr;
                tableSize = (int) (len / 16);
                indirectEntries = tableSize;
                inIndirect = true;
                visited = 0;
                i = 0;
                continue;
            }
            boolean writable = (flags & RawRing.WRITE) != 0;
            // 2.7.4.2: device-readable descriptors before device-writable ones.
            if (!writable && seenWritable) {
                return invalid("readable after writable");
            }
            seenWritable |= writable;
            // 2.7.5: a buffer lies in guest memory (a zero-length one touches nothing and is accepted).
            if (!FuzzMemory.inside(addr, len)) {
                return invalid("buffer outside memory");
            }
            total += len;
            // 2.7.5.2: at most 2^32 bytes in total.
            if (total > (1L << 32)) {
                return invalid("longer than 2^32 bytes");
            }
            bufs.add(new Buf(addr, len, writable));
            if ((flags & RawRing.NEXT) == 0) {
                return new Walk(bufs, null, indirectEntries);
            }
            if (next >= tableSize) {
                return invalid("next out of range");
            }
            i = next;
        }
    }

    /** The guest address of byte {@code pos} of the chain's readable or writable stream. */
    static long addressOf(List<Buf> bufs, boolean writable, long pos) {
        long p = pos;
        for (Buf b : bufs) {
            if (b.writable() != writable) {
                continue;
            }
            if (p < b.len()) {
                return b.addr() + p;
            }
            p -= b.len();
        }
        throw new AssertionError("position " + pos + " past the end of the chain");
    }
}
