package io.kickplug.guest.bench;

import java.io.ByteArrayOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Set;

/**
 * The "newc" cpio archives of the Linux initramfs (the kernel's Documentation/driver-api/early-userspace/
 * buffer-format.rst): a 110-byte ASCII header ("070701", then 13 eight-digit hex fields), the name with its NUL,
 * padded to 4 bytes, the data padded to 4 bytes, and a "TRAILER!!!" entry. The real guest's initrd is the
 * harness's base archive with a small archive of job files appended, which the kernel only reads when it starts
 * on a 4-byte boundary.
 */
final class Cpio {

    private static final int HEADER = 110;
    private static final int DIR = 040755;
    private static final int FILE = 0100644;

    private Cpio() {
    }

    /** An archive of {@code files} (relative paths, in order) with their parent directories first. */
    static byte[] newc(Map<String, byte[]> files) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Set<String> dirs = new LinkedHashSet<>();
        for (String name : files.keySet()) {
            if (name.startsWith("/") || name.contains("..") || name.isEmpty()) {
                throw new IllegalArgumentException("cpio entry names are relative paths: '" + name + "'");
            }
            for (int slash = name.indexOf('/'); slash > 0; slash = name.indexOf('/', slash + 1)) {
                dirs.add(name.substring(0, slash));
            }
        }
        int ino = 1;
        for (String d : dirs) {
            entry(out, ino++, d, DIR, new byte[0]);
        }
        for (Map.Entry<String, byte[]> e : files.entrySet()) {
            entry(out, ino++, e.getKey(), FILE, e.getValue());
        }
        entry(out, 0, "TRAILER!!!", 0, new byte[0]);
        return out.toByteArray();
    }

    private static void entry(ByteArrayOutputStream out, int ino, String name, int mode, byte[] data) {
        byte[] n = (name + "\0").getBytes(StandardCharsets.UTF_8);
        StringBuilder h = new StringBuilder("070701");
        for (long v : new long[] {ino, mode, 0, 0, mode == DIR ? 2 : 1, 0, data.length, 0, 0, 0, 0, n.length, 0}) {
            h.append(String.format("%08x", v));
        }
        out.writeBytes(h.toString().getBytes(StandardCharsets.US_ASCII));
        out.writeBytes(n);
        pad(out, HEADER + n.length);
        out.writeBytes(data);
        pad(out, data.length);
    }

    private static void pad(ByteArrayOutputStream out, long length) {
        for (long i = length; i % 4 != 0; i++) {
            out.write(0);
        }
    }

    /** Writes {@code base}, NUL padding to a 4-byte boundary, then {@code appended}, to {@code target}. */
    static void appendAligned(Path base, byte[] appended, Path target) throws IOException {
        Files.copy(base, target, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
        long size = Files.size(target);
        byte[] padding = new byte[(int) ((4 - size % 4) % 4)];
        try (var out = Files.newOutputStream(target, java.nio.file.StandardOpenOption.APPEND)) {
            out.write(padding);
            out.write(appended);
        }
    }

    /**
     * The data of the first entry named {@code wanted} ("init" or "./init" both match "init") in uncompressed newc
     * archives (one, or several concatenated with NUL padding), or null when they end (or stop being newc) before it.
     */
    static byte[] find(InputStream in, String wanted) throws IOException {
        byte[] header = new byte[HEADER];
        while (true) {
            if (!readHeader(in, header)) {
                return null;
            }
            String h = new String(header, StandardCharsets.US_ASCII);
            if (!h.startsWith("070701") && !h.startsWith("070702")) {
                return null; // compressed, or not newc
            }
            long size = hex(h, 6);
            int nameSize = (int) hex(h, 11);
            if (nameSize <= 0 || nameSize > 4096 || size < 0) {
                return null;
            }
            byte[] n = new byte[nameSize];
            if (!readFully(in, n)) {
                return null;
            }
            skip(in, (4 - (HEADER + nameSize) % 4) % 4);
            String name = new String(n, 0, nameSize - 1, StandardCharsets.UTF_8);
            if (name.equals("TRAILER!!!")) {
                continue; // another archive may follow (the kernel reads concatenated ones), after NUL padding
            }
            if (name.equals(wanted) || name.equals("./" + wanted)) {
                if (size > 1 << 20) {
                    return null;
                }
                byte[] data = new byte[(int) size];
                return readFully(in, data) ? data : null;
            }
            skip(in, size + (4 - size % 4) % 4);
        }
    }

    /** Field {@code index} (0: c_ino) of a header. */
    private static long hex(String header, int index) {
        try {
            return Long.parseLong(header.substring(6 + 8 * index, 14 + 8 * index), 16);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private static boolean readFully(InputStream in, byte[] b) throws IOException {
        int n = in.readNBytes(b, 0, b.length);
        return n == b.length;
    }

    /** A header, after any NUL padding between concatenated archives (4 bytes at a time). */
    private static boolean readHeader(InputStream in, byte[] header) throws IOException {
        byte[] word = new byte[4];
        do {
            if (!readFully(in, word)) {
                return false;
            }
        } while (word[0] == 0 && word[1] == 0 && word[2] == 0 && word[3] == 0);
        System.arraycopy(word, 0, header, 0, 4);
        return in.readNBytes(header, 4, header.length - 4) == header.length - 4;
    }

    private static void skip(InputStream in, long n) throws IOException {
        try {
            in.skipNBytes(n);
        } catch (EOFException e) {
            // the next read sees the end
        }
    }
}
