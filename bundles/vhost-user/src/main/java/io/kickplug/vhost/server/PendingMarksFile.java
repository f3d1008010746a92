package io.kickplug.vhost.server;

import io.kickplug.vhost.backend.DirtyMarks;
import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.util.HexFormat;
import java.util.zip.CRC32C;

/**
 * One export's pending dirty-log marks ({@link PendingMarks.Entry}) in a file, so that the next revision of the
 * vhost-user bundle finds them after an update (the bundle's persistent data area survives it). Big-endian:
 * <pre>
 *   8 bytes  magic "KPMARKS1"
 *   u16 n, n bytes   export name (UTF-8)
 *   u16 n, n bytes   socket (UTF-8)
 *   u64      when the marks were left (epoch milliseconds)
 *   u32 w    non-zero words, at most {@link DirtyMarks#MAX_WORDS}
 *   w times  u64 word index (strictly ascending), u64 bits (not 0)
 *   u32      CRC-32C of everything before it
 * </pre>
 * Written to a temporary file, forced to disk, then renamed over the file (atomic), so a reader sees a whole file or
 * none. A read checks everything and {@link Rejected rejects} the file with the reason: a file cut short or
 * changed, one of another export, and marks older than {@link PendingMarks#MAX_AGE_MILLIS} (or left in the future).
 */
public final class PendingMarksFile {

    private static final byte[] MAGIC = "KPMARKS1".getBytes(StandardCharsets.US_ASCII);
    private static final String SUFFIX = ".marks";
    static final String TEMP_SUFFIX = ".tmp";
    /** Names and sockets longer than this are not ours (a socket path is at most 107 bytes). */
    private static final int MAX_TEXT = 4096;
    /** How far in the future a file's time may be (clocks that stepped back a little). */
    static final long CLOCK_SLACK_MILLIS = 60_000;
    private static final long MAX_BYTES = 8 + 2 + MAX_TEXT + 2 + MAX_TEXT + 8 + 4 + 16L * DirtyMarks.MAX_WORDS + 4;

    /** Why a file is not taken. */
    public static final class Rejected extends IOException {
        private static final long serialVersionUID = 1L;

        Rejected(String why) {
            super(why);
        }
    }

    private PendingMarksFile() {
    }

    /** The file name of {@code export}'s marks: its name in hex (any disk name is a safe file name then). */
    public static String fileName(String export) {
        return HexFormat.of().formatHex(export.getBytes(StandardCharsets.UTF_8)) + SUFFIX;
    }

    /** The export a {@link #fileName} names, or {@code null} for another file. */
    static String exportOf(String fileName) {
        if (!fileName.endsWith(SUFFIX)) {
            return null;
        }
        String hex = fileName.substring(0, fileName.length() - SUFFIX.length());
        try {
            return hex.isEmpty() ? null : new String(HexFormat.of().parseHex(hex), StandardCharsets.UTF_8);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** Writes {@code e} to {@code file} atomically (a temporary file in the same directory, renamed). */
    public static void write(Path file, PendingMarks.Entry e) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(64 + 16 * e.marks().wordCount());
        DataOutputStream out = new DataOutputStream(bytes);
        out.write(MAGIC);
        text(out, e.export());
        text(out, e.socket());
        out.writeLong(e.leftAtMillis());
        DirtyMarks m = e.marks();
        out.writeInt(m.wordCount());
        for (int i = 0; i < m.wordCount(); i++) {
            out.writeLong(m.word(i));
            out.writeLong(m.bits(i));
        }
        out.flush();
        CRC32C crc = new CRC32C();
        crc.update(bytes.toByteArray());
        out.writeInt((int) crc.getValue());
        out.flush();
        Path temp = file.resolveSibling(file.getFileName() + TEMP_SUFFIX);
        try (FileChannel ch = FileChannel.open(temp, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING)) {
            ByteBuffer b = ByteBuffer.wrap(bytes.toByteArray());
            while (b.hasRemaining()) {
                ch.write(b);
            }
            ch.force(true);
        }
        try {
            Files.move(temp, file, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException x) {
            Files.deleteIfExists(temp);
            throw x;
        }
    }

    private static void text(DataOutputStream out, String s) throws IOException {
        byte[] b = s.getBytes(StandardCharsets.UTF_8);
        if (b.length > MAX_TEXT) {
            throw new IOException("a name of " + b.length + " bytes (at most " + MAX_TEXT + ")");
        }
        out.writeShort(b.length);
        out.write(b);
    }

    /**
     * Reads the marks of {@code export} from {@code file}, checking them all.
     *
     * @param now epoch milliseconds, for the age check
     * @throws Rejected with the reason when the file is corrupt, of another export or stale
     * @throws IOException when the file cannot be read
     */
    public static PendingMarks.Entry read(Path file, String export, long now) throws IOException {
        long size = Files.size(file);
        if (size > MAX_BYTES) {
            throw new Rejected("the file has " + size + " bytes, more than marks can take (" + MAX_BYTES + ")");
        }
        ByteBuffer b = ByteBuffer.wrap(Files.readAllBytes(file));
        try {
            if (b.remaining() < MAGIC.length + 4) {
                throw new Rejected("the file is cut short (" + b.remaining() + " bytes)");
            }
            CRC32C crc = new CRC32C();
            crc.update(b.array(), 0, b.limit() - 4);
            if ((int) crc.getValue() != b.getInt(b.limit() - 4)) {
                throw new Rejected("its checksum does not match its contents (a file cut short or changed)");
            }
            b.limit(b.limit() - 4);
            byte[] magic = new byte[MAGIC.length];
            b.get(magic);
            if (!java.util.Arrays.equals(magic, MAGIC)) {
                throw new Rejected("it is no file of pending marks (or of another version)");
            }
            String name = text(b);
            String socket = text(b);
            if (!name.equals(export)) {
                throw new Rejected("it holds the marks of export '" + name + "', not of '" + export + "'");
            }
            long leftAt = b.getLong();
            if (!PendingMarks.fresh(leftAt, now)) {
                throw new Rejected("its marks were left " + (now - leftAt) / 1000 + " s ago, outside 0 to "
                        + PendingMarks.MAX_AGE_MILLIS / 1000 + " s (stale)");
            }
            int words = b.getInt();
            if (words < 0 || words > DirtyMarks.MAX_WORDS || b.remaining() != 16L * words) {
                throw new Rejected(Integer.toUnsignedString(words) + " words announced in " + b.remaining()
                        + " bytes (at most " + DirtyMarks.MAX_WORDS + " words of 16 bytes)");
            }
            long[] w = new long[words];
            long[] v = new long[words];
            for (int i = 0; i < words; i++) {
                w[i] = b.getLong();
                v[i] = b.getLong();
            }
            DirtyMarks marks;
            try {
                marks = new DirtyMarks(w, v);
            } catch (IllegalArgumentException x) {
                throw new Rejected(x.getMessage());
            }
            return new PendingMarks.Entry(name, socket, marks, leftAt);
        } catch (java.nio.BufferUnderflowException | IllegalArgumentException x) {
            throw new Rejected("the file is cut short or malformed (" + x + ")");
        }
    }

    private static String text(ByteBuffer b) throws Rejected {
        int n = b.getShort() & 0xffff;
        if (n > MAX_TEXT || n > b.remaining()) {
            throw new Rejected("a name of " + n + " bytes");
        }
        byte[] s = new byte[n];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }
}
