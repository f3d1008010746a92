package io.kickplug.launcher;

import java.io.IOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.channels.OverlappingFileLockException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * A persistent Felix bundle cache ({@code --state DIR}; a daemon's default is under {@code $XDG_STATE_HOME}), so
 * that a start does not install the bundle set again and Felix SCR reads its component descriptions from its
 * metadata cache ({@code ds.cache.metadata}) instead of parsing their XML.
 *
 * <p>Layout: {@code DIR/felix} Felix's storage, {@code DIR/distribution.txt} what it was made from (one line per
 * jar: path, size, modification time, for the framework jar, the launcher jar and every bundle jar),
 * {@code DIR/kickplug.lock} held (locked) by the one process that uses the folder, {@code DIR/config}
 * ConfigAdmin's folder: the disks and exports (their configurations, with every setting a user changed while they
 * ran), kept between starts in a state folder named by {@code --state DIR}, so that a restarted daemon serves
 * them again; emptied at start and exit in a daemon's default folder, which is only a cache. {@code DIR/native}
 * junixsocket's native library, {@code DIR/bundles.txt} what the launcher read from the jars ({@link BundleFacts}).
 *
 * <p>The cache is used again only when {@code distribution.txt} names exactly the jars there are now, with the
 * same sizes and times; anything else (a jar added, removed, rebuilt or replaced, another Felix, a missing or
 * unreadable record) empties Felix's storage first, so a stale cache never runs old code or old component
 * metadata. The record is removed before the storage is emptied and written again only once every bundle is
 * installed, so a process killed in between leaves a cache that the next start throws away.
 */
final class StateDir {

    static final String RECORD = "distribution.txt";
    static final String LOCK = "kickplug.lock";
    static final String FACTS = "bundles.txt";
    private static final String HEADER = "# kickplug state 1";

    private final Path dir;
    private final String distribution;
    private final boolean reusable;
    private final FileChannel lock;
    private final boolean keepConfig;

    private StateDir(Path dir, String distribution, boolean reusable, FileChannel lock, boolean keepConfig) {
        this.dir = dir;
        this.distribution = distribution;
        this.reusable = reusable;
        this.lock = lock;
        this.keepConfig = keepConfig;
    }

    /**
     * Creates {@code dir} if needed and locks it for this process; its configurations are emptied (a cache).
     *
     * @param jars every jar the runtime runs: the framework, the launcher and the bundles
     * @return the state folder, or {@code null} when another live process holds it
     */
    static StateDir open(Path dir, Collection<Path> jars) throws IOException {
        return open(dir, jars, false);
    }

    /**
     * Creates {@code dir} if needed and locks it for this process.
     *
     * @param jars every jar the runtime runs: the framework, the launcher and the bundles
     * @param keepConfig whether ConfigAdmin's configurations (the disks and exports) are kept from the last run and
     *     for the next one ({@code --state DIR}), or emptied at start and exit (a daemon's default folder)
     * @return the state folder, or {@code null} when another live process holds it
     */
    static StateDir open(Path dir, Collection<Path> jars, boolean keepConfig) throws IOException {
        dir = dir.toAbsolutePath();
        Files.createDirectories(dir);
        FileChannel channel = FileChannel.open(dir.resolve(LOCK), StandardOpenOption.CREATE, StandardOpenOption.WRITE);
        FileLock held;
        try {
            held = channel.tryLock();
        } catch (OverlappingFileLockException e) {
            held = null; // this very process uses it already
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        if (held == null) {
            channel.close();
            return null;
        }
        String now = describe(jars);
        String before;
        try {
            before = Files.readString(dir.resolve(RECORD), StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            before = null;
        } catch (IOException e) {
            before = null; // unreadable: made again
        }
        boolean reusable = now.equals(before) && Files.isDirectory(dir.resolve("felix"));
        StateDir state = new StateDir(dir, now, reusable, channel, keepConfig);
        if (!reusable) {
            // Before Felix empties its storage: a start killed from here on leaves no record, so the next start
            // empties it again.
            Files.deleteIfExists(dir.resolve(RECORD));
        }
        state.resetConfig();
        return state;
    }

    /** One line per jar (sorted by path): path, size, modification time in nanoseconds. */
    static String describe(Collection<Path> jars) throws IOException {
        List<String> lines = new ArrayList<>();
        for (Path jar : jars) {
            Path abs = jar.toAbsolutePath().normalize();
            BasicFileAttributes a = Files.readAttributes(abs, BasicFileAttributes.class);
            lines.add(abs + "\t" + a.size() + "\t" + a.lastModifiedTime().to(java.util.concurrent.TimeUnit.NANOSECONDS)
                    + "\t" + (a.fileKey() == null ? "" : a.fileKey()));
        }
        lines.sort(null);
        StringBuilder s = new StringBuilder(HEADER).append('\n');
        for (String line : lines) {
            s.append(line).append('\n');
        }
        return s.toString();
    }

    Path dir() {
        return dir;
    }

    /** Felix's storage folder. */
    Path felixStorage() {
        return dir.resolve("felix");
    }

    /** ConfigAdmin's folder (empty at start unless {@link #keepsConfig}). */
    Path config() {
        return dir.resolve("config");
    }

    /** Whether the configurations (disks, exports) are kept between starts. */
    /**
     * The plugin jars that {@code kp:install} keeps ({@code DIR/plugins}, one {@code <symbolic name>.jar} each), in a
     * state folder that keeps its configurations; installed and started again at every start.
     */
    Path plugins() {
        return dir.resolve("plugins");
    }

    boolean keepsConfig() {
        return keepConfig;
    }

    /** Where junixsocket extracts its native library. */
    Path nativeDir() {
        return dir.resolve("native");
    }

    /** Whether Felix's storage holds the bundles of this very distribution (otherwise it is emptied first). */
    boolean reusable() {
        return reusable;
    }

    /** What the launcher read from the jars ({@link BundleFacts}); used only while {@link #reusable}. */
    Path facts() {
        return dir.resolve(FACTS);
    }

    /** Records the distribution once every bundle is installed, so that the next start uses the cache. */
    void installed() throws IOException {
        installed(null);
    }

    /**
     * Records the distribution once every bundle is installed, so that the next start uses the cache, with
     * {@code facts} ({@link BundleFacts}, written first: a record never goes with the facts of other jars), or
     * without new ones when {@code null}.
     */
    void installed(String facts) throws IOException {
        if (!reusable) {
            Files.deleteIfExists(facts());
        }
        if (facts != null) {
            // With a reusable cache too (its facts were missing): the record says the jars are those it was made
            // from, and the facts were read from them now.
            Path tmpFacts = dir.resolve(FACTS + ".tmp");
            Files.writeString(tmpFacts, facts, StandardCharsets.UTF_8);
            Files.move(tmpFacts, facts(), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
        }
        if (reusable) {
            return;
        }
        Path tmp = dir.resolve(RECORD + ".tmp");
        Files.writeString(tmp, distribution, StandardCharsets.UTF_8);
        Files.move(tmp, dir.resolve(RECORD), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    }

    /** Removes the record, so that the next start empties the cache and installs everything again. */
    void forget() {
        try {
            Files.deleteIfExists(dir.resolve(RECORD));
        } catch (IOException e) {
            // the start fails anyway; nothing better to do
        }
    }

    /** Empties ConfigAdmin's folder (also called at exit), unless it {@link #keepsConfig}. */
    void resetConfig() throws IOException {
        if (keepConfig) {
            return;
        }
        Path config = config();
        if (Files.isDirectory(config, LinkOption.NOFOLLOW_LINKS)) {
            try {
                FileTree.delete(config);
            } catch (java.io.UncheckedIOException e) {
                throw e.getCause();
            }
        }
    }

    /** Releases the folder (the lock also goes when the process dies). */
    void close() {
        try {
            lock.close();
        } catch (IOException e) {
            // nothing to do: the process ends soon
        }
    }
}
