package io.kickplug.virtio.testkit;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The guest memory of a live migration's two ends compared page by page, once the migration completed: the source
 * is paused ({@code postmigrate}) and the destination was started with {@code -S}, so neither has run since the last
 * page was sent and both must hold the same bytes. Each QEMU saves its memory with QMP {@code pmemsave}
 * ({@link #pmemsave}); every 4 KiB page that differs is a page the migration lost. A page the source's vhost-user
 * device wrote while logging points at the back-end's dirty log; a page it never wrote was written only by the
 * guest's CPUs, whose dirty tracking is QEMU's own.
 */
public final class MigratedMemory {

    private static final int PAGE = 4096;
    private static final int LISTED = 20;

    /** One page that differs: where, how many bytes, the first ones (source/destination), and who wrote it. */
    public record Page(long number, int bytes, int first, String sample, boolean deviceWrote) {
        @Override
        public String toString() {
            return String.format("0x%x (%d bytes from +0x%x:%s%s)", number << 12, bytes, first, sample,
                    deviceWrote ? ", written by the device" : "");
        }
    }

    /** The pages that differ, and how many pages the device wrote in all (-1: not known). */
    public record Result(List<Page> pages, int deviceWrotePages) {
        public boolean same() {
            return pages.isEmpty();
        }

        /** Differing pages the source's device wrote: only these can be the back-end's loss. */
        public List<Page> deviceWritten() {
            return pages.stream().filter(Page::deviceWrote).toList();
        }

        @Override
        public String toString() {
            if (deviceWrotePages < 0) {
                return pages.isEmpty() ? "guest memory identical on both ends" : pages.size() + " pages differ between"
                        + " the source and the destination (which of them the device wrote is not known here): first "
                        + pages.subList(0, Math.min(LISTED, pages.size()));
            }
            if (pages.isEmpty()) {
                return "guest memory identical on both ends";
            }
            List<Page> device = deviceWritten();
            return pages.size() + " pages differ between the source and the destination, " + device.size()
                    + " of them written by the source's device (of the " + deviceWrotePages + " it wrote while"
                    + " logging): " + (device.isEmpty() ? "" : "device-written " + device + "; ") + "first "
                    + pages.subList(0, Math.min(LISTED, pages.size()));
        }
    }

    private MigratedMemory() {
    }

    /** The arguments of QMP {@code pmemsave} for {@code bytes} of guest memory from address 0 into {@code file}. */
    public static String pmemsave(long bytes, Path file) {
        return "{\"val\": 0, \"size\": " + bytes + ", \"filename\": \"" + file + "\"}";
    }

    /**
     * Compares two memory images page by page; {@code deviceWrote} holds the page numbers the source's device wrote,
     * or is {@code null} when they are not known.
     */
    public static Result compare(Path a, Path b, Set<Long> deviceWrote) throws IOException {
        List<Page> pages = new ArrayList<>();
        try (FileChannel ca = FileChannel.open(a); FileChannel cb = FileChannel.open(b)) {
            if (ca.size() != cb.size()) {
                throw new IOException("memory images of " + ca.size() + " and " + cb.size() + " bytes");
            }
            ByteBuffer ba = ByteBuffer.allocate(1 << 20);
            ByteBuffer bb = ByteBuffer.allocate(1 << 20);
            for (long at = 0; at < ca.size(); at += ba.capacity()) {
                ba.clear();
                bb.clear();
                readFully(ca, ba, at);
                readFully(cb, bb, at);
                byte[] x = ba.array();
                byte[] y = bb.array();
                for (int p = 0; p < ba.position(); p += PAGE) {
                    if (Arrays.equals(x, p, p + PAGE, y, p, p + PAGE)) {
                        continue;
                    }
                    int n = 0;
                    int first = -1;
                    StringBuilder sample = new StringBuilder();
                    for (int k = 0; k < PAGE; k++) {
                        if (x[p + k] != y[p + k]) {
                            n++;
                            if (first < 0) {
                                first = k;
                            }
                            if (sample.length() < 8 * 6) {
                                sample.append(String.format(" %02x/%02x", x[p + k], y[p + k]));
                            }
                        }
                    }
                    long number = (at + p) / PAGE;
                    pages.add(new Page(number, n, first, sample.toString(), deviceWrote != null && deviceWrote.contains(number)));
                }
            }
        }
        return new Result(List.copyOf(pages), deviceWrote == null ? -1 : deviceWrote.size());
    }

    private static void readFully(FileChannel c, ByteBuffer b, long at) throws IOException {
        while (b.hasRemaining()) {
            int n = c.read(b, at + b.position());
            if (n < 0) {
                break;
            }
        }
    }
}
