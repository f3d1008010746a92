package io.kickplug.vhost.backend;

import io.kickplug.vhost.protocol.Fds;
import java.io.FileDescriptor;
import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.LongAdder;

/**
 * The dirty-page log of live migration (docs/interop/vhost-user.rst, "Migration"): a bitmap in shared memory the
 * front-end gives with SET_LOG_BASE, one bit per 4 KiB page of guest physical address,
 * {@code log[page / 8] |= 1 << (page % 8)}, set atomically because the front-end clears it concurrently (QEMU
 * takes 64-bit words with an atomic exchange, hw/virtio/vhost.c {@code vhost_dev_sync_region}). The device marks
 * every page it wrote, after writing it, so a page the front-end copies after clearing its bit holds the write.
 *
 * <p>Bits are set with an atomic OR on the little-endian 64-bit word that holds them (bit {@code page % 64} of word
 * {@code page / 64} is bit {@code page % 8} of byte {@code page / 8}), from any I/O thread.
 *
 * <p>A new SET_LOG_BASE (the front-end's memory map changed) {@link #replace replaces} the bitmap without losing a
 * mark: a marking thread re-reads the current bitmap after its atomic OR and marks again when it changed, so a
 * mark made while the bitmap is replaced lands in the new one, or in the old one before the reply to SET_LOG_BASE
 * (QEMU syncs the old bitmap after that reply: {@code vhost_dev_log_resize}). The old mapping is never unmapped
 * explicitly (a thread may still be marking in it); the garbage collector unmaps it.
 */
final class DirtyLog {

    private static final Logger LOG = System.getLogger(DirtyLog.class.getName());

    /** VHOST_LOG_PAGE: each bit covers this many bytes of guest physical address. */
    static final int PAGE_SHIFT = 12;
    static final long PAGE = 1L << PAGE_SHIFT;

    private static final VarHandle WORD = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    /** One mapped bitmap. */
    record Bitmap(ByteBuffer bytes, long pages) {
        /** Atomically sets the page's bit; true when it was clear. */
        boolean mark(long page) {
            long mask = 1L << (page & 63);
            long old = (long) WORD.getAndBitwiseOr(bytes, (int) ((page >>> 6) << 3), mask);
            return (old & mask) == 0;
        }

        boolean isMarked(long page) {
            long mask = 1L << (page & 63);
            return ((long) WORD.getVolatile(bytes, (int) ((page >>> 6) << 3)) & mask) != 0;
        }

        /** 64-bit word {@code i} (pages {@code 64 i} to {@code 64 i + 63}), read atomically. */
        long word(long i) {
            return (long) WORD.getVolatile(bytes, (int) (i << 3));
        }

        /** Atomically ORs {@code bits} into word {@code i}. */
        void orWord(long i, long bits) {
            WORD.getAndBitwiseOr(bytes, (int) (i << 3), bits);
        }
    }

    /**
     * For tests (system property {@code kickplug.vhost.dirtylog.trace=true}; LiveMigrationIT tells the pages the
     * device wrote from those only the guest's CPUs wrote): every page each log marked, with the
     * {@link System#nanoTime()} of its last mark, by log name. Off by default: nothing is recorded.
     */
    static final boolean TRACE = Boolean.getBoolean("kickplug.vhost.dirtylog.trace");
    static final ConcurrentHashMap<String, ConcurrentHashMap<Long, Long>> TRACED = new ConcurrentHashMap<>();

    private final String name;
    private volatile Bitmap current;
    private final LongAdder newlyMarked = new LongAdder();
    private final LongAdder outside = new LongAdder();
    private final AtomicBoolean outsideWarned = new AtomicBoolean();
    private volatile long bitmapBytes;
    private volatile long bases;

    DirtyLog(String name) {
        this.name = name;
    }

    /**
     * Maps the bitmap of a SET_LOG_BASE: {@code size} bytes of the file behind {@code fd} from {@code offset}. The
     * descriptor is closed either way. The size must be a multiple of 8 (QEMU's log is an array of u64) and the
     * offset 8-aligned, so every word is aligned for the atomic OR.
     *
     * @throws IOException when the file cannot be mapped or is too short
     */
    static Bitmap map(FileDescriptor fd, long size, long offset) throws IOException {
        try {
            try (FileChannel ch = FileChannel.open(Path.of("/proc/self/fd/" + Fds.number(fd)), StandardOpenOption.READ,
                    StandardOpenOption.WRITE)) {
                if (Long.compareUnsigned(offset + size, ch.size()) > 0) {
                    throw new IOException(String.format("the log needs bytes up to 0x%x of its file, which has 0x%x",
                            offset + size, ch.size()));
                }
                ByteBuffer b = ch.map(FileChannel.MapMode.READ_WRITE, offset, size).order(ByteOrder.LITTLE_ENDIAN);
                return new Bitmap(b, size * 8);
            }
        } finally {
            Fds.close(fd);
        }
    }

    /** A bitmap over a buffer the caller made (tests), {@code bytes.capacity()} a multiple of 8. */
    static Bitmap over(ByteBuffer bytes) {
        return new Bitmap(bytes.order(ByteOrder.LITTLE_ENDIAN), bytes.capacity() * 8L);
    }

    /** Installs {@code b} as the bitmap marks go to from now on (SET_LOG_BASE); see the class comment. */
    void replace(Bitmap b) {
        current = b;
        bitmapBytes = b.pages() / 8;
        bases++;
    }

    /** Forgets the bitmap (the front-end reset the device); marks made afterwards go nowhere. */
    void clear() {
        current = null;
        bitmapBytes = 0;
    }

    boolean hasBitmap() {
        return current != null;
    }

    /**
     * The marks the current bitmap holds now, which the front-end has not collected (it clears what it collects),
     * or none without a bitmap; {@code dropped[0]} gets the pages past {@link DirtyMarks#MAX_WORDS}. For the end
     * of a session, after the device stopped: the mapping stays valid until the garbage collector unmaps it.
     */
    DirtyMarks uncollected(long[] dropped) {
        Bitmap b = current;
        dropped[0] = 0;
        return b == null ? DirtyMarks.none() : DirtyMarks.of(b, dropped);
    }

    /** Marks the pages of {@code [gpa, gpa + length)}; nothing when {@code length} is 0. Any thread. */
    void mark(long gpa, long length) {
        if (length <= 0) {
            return;
        }
        long first = gpa >>> PAGE_SHIFT;
        long last = (gpa + length - 1) >>> PAGE_SHIFT;
        for (long page = first; page <= last; page++) {
            markPage(page);
        }
        if (TRACE) {
            ConcurrentHashMap<Long, Long> m = TRACED.computeIfAbsent(name, k -> new ConcurrentHashMap<>());
            long now = System.nanoTime();
            for (long page = first; page <= last; page++) {
                m.put(page, now);
            }
        }
    }

    private void markPage(long page) {
        Bitmap b = current;
        while (b != null) {
            if (Long.compareUnsigned(page, b.pages()) >= 0) {
                outside.increment();
                if (outsideWarned.compareAndSet(false, true)) {
                    LOG.log(Level.WARNING, "vhost-user " + name + ": page " + page + " (guest address 0x"
                            + Long.toHexString(page << PAGE_SHIFT) + ") is beyond the dirty log of " + b.pages()
                            + " pages; not marked");
                }
                return;
            }
            if (b.mark(page)) {
                newlyMarked.increment();
            }
            Bitmap now = current; // a volatile read after the atomic OR: see the class comment
            if (now == b) {
                return;
            }
            b = now;
        }
    }

    /** Bits this log set that were clear (the front-end clears them as it collects): the pages marked. */
    long pagesMarked() {
        return newlyMarked.sum();
    }

    /** Pages a write touched beyond the bitmap's end (a front-end that sized its log too small). */
    long pagesOutside() {
        return outside.sum();
    }

    long bitmapBytes() {
        return bitmapBytes;
    }

    /** SET_LOG_BASE messages taken. */
    long bases() {
        return bases;
    }
}
