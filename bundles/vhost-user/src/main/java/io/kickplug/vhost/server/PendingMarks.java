package io.kickplug.vhost.server;

import io.kickplug.vhost.backend.DirtyMarks;
import io.kickplug.vhost.backend.MarksCarry;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * The dirty-log marks sessions left uncollected, per export, until the export's next session takes them into its log
 * (see {@link MarksCarry}; a bundle update under the export during a live migration). One entry per export: the
 * socket it served, the marks (later sessions' marks ORed in) and when the last of them was left.
 *
 * <p>Marks are dropped, with a warning naming the export and the page count, when the next session's device starts
 * without dirty logging (the migration ended while no session was there: the marks cannot reach the front-end any
 * more, and need not), when they are older than {@link #MAX_AGE_MILLIS} (no session took them in time), or when
 * the next session is on another socket (another front-end).
 *
 * <p>The vhost-user bundle keeps one store for as long as it runs, so marks outlive the exports a device or disk
 * bundle update ends and makes again; across an update of the vhost-user bundle itself they are {@link #save saved}
 * to its persistent data area and {@link #load loaded} by the next revision ({@link PendingMarksFile}).
 * Thread-safe.
 */
public final class PendingMarks {

    private static final Logger LOG = System.getLogger(PendingMarks.class.getName());

    /**
     * Marks older than this are stale: a front-end that reconnects (QEMU's {@code reconnect=1}: every second) to the
     * export a bundle update made again comes back within seconds, and a migration that waited longer is over.
     */
    public static final long MAX_AGE_MILLIS = TimeUnit.MINUTES.toMillis(10);

    /** The marks of one export. */
    public record Entry(String export, String socket, DirtyMarks marks, long leftAtMillis) {
    }

    private final Map<String, Entry> entries = new LinkedHashMap<>();
    private final LongSupplier clock;

    public PendingMarks() {
        this(System::currentTimeMillis);
    }

    /** With a clock of epoch milliseconds (tests). */
    public PendingMarks(LongSupplier clock) {
        this.clock = clock;
    }

    /** The carry of export {@code export} served on {@code socket}, for its sessions. */
    public MarksCarry carry(String export, String socket) {
        return new MarksCarry() {
            @Override
            public void left(DirtyMarks marks) {
                PendingMarks.this.left(export, socket, marks);
            }

            @Override
            public DirtyMarks take() {
                return PendingMarks.this.take(export, socket);
            }

            @Override
            public void discard(String why) {
                PendingMarks.this.discard(export, why);
            }
        };
    }

    /** Keeps {@code marks}, ORed with those the export has pending already. */
    synchronized void left(String export, String socket, DirtyMarks marks) {
        Entry old = entries.get(export);
        long now = clock.getAsLong();
        Entry e = new Entry(export, socket, marks, now);
        if (old != null && old.socket().equals(socket) && fresh(old)) {
            e = merged(old, e, now);
        } else if (old != null) {
            warnDropped(old, fresh(old) ? "another session on " + socket + " left marks" : stale(old));
        }
        entries.put(export, e);
    }

    /** {@code old} and {@code e} of one export and socket as one entry, left at {@code leftAtMillis}. */
    private static Entry merged(Entry old, Entry e, long leftAtMillis) {
        long[] dropped = new long[1];
        DirtyMarks all = old.marks().or(e.marks(), dropped);
        if (dropped[0] > 0) {
            LOG.log(Level.ERROR, "vhost-user " + e.export() + ": more dirty-log marks pending than are kept: "
                    + dropped[0] + " pages dropped; a live migration may miss them");
        }
        return new Entry(e.export(), e.socket(), all, leftAtMillis);
    }

    /** Removes and returns the export's pending marks, or {@code null}; stale or foreign ones are dropped. */
    synchronized DirtyMarks take(String export, String socket) {
        Entry e = entries.remove(export);
        if (e == null) {
            return null;
        }
        if (!fresh(e)) {
            warnDropped(e, stale(e));
            return null;
        }
        if (!e.socket().equals(socket)) {
            warnDropped(e, "they were left by a session on " + e.socket() + ", the new session is on " + socket);
            return null;
        }
        return e.marks();
    }

    synchronized void discard(String export, String why) {
        Entry e = entries.remove(export);
        if (e != null) {
            warnDropped(e, why + " (the migration they belong to has ended)");
        }
    }

    /** Pages pending for {@code export}: marks an earlier session left that no session has taken yet. */
    public synchronized long pendingPages(String export) {
        Entry e = entries.get(export);
        return e == null ? 0 : e.marks().pages();
    }

    /** The entry pending for {@code export}, or {@code null} (tests). */
    public synchronized Entry entry(String export) {
        return entries.get(export);
    }

    private boolean fresh(Entry e) {
        return fresh(e.leftAtMillis(), clock.getAsLong());
    }

    /**
     * Whether marks left at {@code leftAtMillis} may still be applied at {@code nowMillis}: at most
     * {@link #MAX_AGE_MILLIS} old, and not from further in the future than a clock stepped back a little
     * ({@link PendingMarksFile#CLOCK_SLACK_MILLIS}). The store and its files apply the same rule.
     */
    static boolean fresh(long leftAtMillis, long nowMillis) {
        long age = nowMillis - leftAtMillis;
        return age >= -PendingMarksFile.CLOCK_SLACK_MILLIS && age <= MAX_AGE_MILLIS;
    }

    private String stale(Entry e) {
        return "they were left " + (clock.getAsLong() - e.leftAtMillis()) / 1000 + " s ago, more than "
                + MAX_AGE_MILLIS / 1000 + " s";
    }

    private static void warnDropped(Entry e, String why) {
        LOG.log(Level.WARNING, "vhost-user " + e.export() + ": dropping " + e.marks().pages() + " dirty-log pages an"
                + " earlier session marked and the front-end did not collect: " + why + "; a live migration still"
                + " under way may miss the pages they stand for");
    }

    /**
     * Writes every entry to its own file in {@code dir} ({@link PendingMarksFile}), for the next revision of the
     * bundle; the store keeps them (a component activated again in this revision finds them in memory, and the
     * file's copy ORed in changes nothing). An entry that cannot be written is logged: an update of the bundle
     * loses its marks.
     */
    public synchronized void save(Path dir) {
        if (entries.isEmpty()) {
            return;
        }
        try {
            Files.createDirectories(dir);
        } catch (IOException e) {
            LOG.log(Level.ERROR, "cannot create " + dir + " for the pending dirty-log marks: " + e.getMessage());
            return;
        }
        for (Entry e : entries.values()) {
            try {
                PendingMarksFile.write(dir.resolve(PendingMarksFile.fileName(e.export())), e);
                LOG.log(Level.INFO, "vhost-user " + e.export() + ": " + e.marks().pages() + " uncollected dirty-log"
                        + " pages saved in the bundle's data area, for the export's next session");
            } catch (IOException | RuntimeException x) {
                LOG.log(Level.ERROR, "vhost-user " + e.export() + ": cannot save " + e.marks().pages()
                        + " uncollected dirty-log pages: " + x.getMessage() + "; a live migration may miss them"
                        + " if this bundle is updated");
            }
        }
    }

    /**
     * Reads the files {@link #save} wrote into {@code dir} and deletes them; a file that is corrupt, stale or not
     * the export its name says is rejected with its reason in the log, never applied. Marks of an export that has
     * marks in the store already are ORed with them.
     */
    public synchronized void load(Path dir) {
        if (!Files.isDirectory(dir)) {
            return;
        }
        try (DirectoryStream<Path> files = Files.newDirectoryStream(dir)) {
            for (Path f : files) {
                String export = PendingMarksFile.exportOf(f.getFileName().toString());
                try {
                    if (export == null) {
                        if (!f.getFileName().toString().endsWith(PendingMarksFile.TEMP_SUFFIX)) {
                            LOG.log(Level.WARNING, "removing " + f + ": not a file of pending dirty-log marks");
                        }
                        continue;
                    }
                    Entry e = PendingMarksFile.read(f, export, clock.getAsLong());
                    Entry old = entries.get(export);
                    if (old != null && old.socket().equals(e.socket())) {
                        e = merged(old, e, Math.max(old.leftAtMillis(), e.leftAtMillis()));
                    }
                    entries.put(export, e);
                    LOG.log(Level.INFO, "vhost-user " + export + ": " + e.marks().pages() + " uncollected dirty-log"
                            + " pages read from the bundle's data area wait for the export's next session");
                } catch (PendingMarksFile.Rejected r) {
                    LOG.log(Level.WARNING, "vhost-user " + export + ": pending dirty-log marks in " + f
                            + " rejected: " + r.getMessage() + "; a live migration still under way may miss them");
                } finally {
                    Files.deleteIfExists(f);
                }
            }
        } catch (IOException e) {
            LOG.log(Level.ERROR, "cannot read the pending dirty-log marks in " + dir + ": " + e.getMessage());
        }
    }
}
