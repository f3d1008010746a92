package io.kickplug.blk.backend;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.VirtioBlk;
import java.io.EOFException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.AccessDeniedException;
import java.nio.file.Files;
import java.nio.file.InvalidPathException;
import java.nio.file.OpenOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A raw image file: byte {@code n} of the disk is byte {@code n} of the file. Positional
 * {@link FileChannel} I/O, so concurrent calls on disjoint ranges need no lock; every call loops until all
 * its bytes moved, and a read that meets the end of the file is an error.
 *
 * <ul>
 * <li>{@link #flush} is {@code FileChannel.force(false)}: fdatasync.</li>
 * <li>{@link #discard} and {@link #writeZeroes} write zeroes in bounded chunks. Java 17 cannot punch a
 * hole (fallocate with PUNCH_HOLE) without native code, so a discard does not give space back to the host:
 * on a sparse image it even allocates the range. The guest reads zeroes afterwards either way.</li>
 * <li>The image is never truncated or extended except by {@link #resize}; I/O beyond the current size is
 * refused, and a read-write lock keeps resizes away from I/O in progress.</li>
 * <li>Direct mode ({@link BackendSpec#direct()}) opens with {@code ExtendedOpenOption.DIRECT} (O_DIRECT).
 * O_DIRECT needs buffers, offsets and lengths aligned to the file system's block size, and guest buffers
 * are not, so every transfer goes through an aligned bounce buffer (one per thread, {@value #BOUNCE_BYTES}
 * bytes); a write that does not cover whole blocks reads the partial blocks first (read-modify-write,
 * serialised by one lock so that two such writes to one block do not lose each other's bytes). The image
 * size must then be a multiple of the block size, so no transfer reaches past the end of the file.</li>
 * </ul>
 *
 * <p>The thread that calls I/O must not be interrupted: an interrupt closes a {@link FileChannel} for
 * good (ClosedByInterruptException), and every later request of the disk fails.
 */
public final class FileBackend extends ResizeLockedBackend {

    /** Largest piece of one zero-fill write, and the size of a direct-mode bounce buffer. */
    static final int BOUNCE_BYTES = 1 << 20;
    private static final ByteBuffer ZEROES = ByteBuffer.allocateDirect(BOUNCE_BYTES);

    /** Opens a channel; a seam so tests can simulate a file system that refuses O_DIRECT. */
    interface Opener {
        FileChannel open(Path path, OpenOption... options) throws IOException;
    }

    private final Path path;
    private final FileChannel channel;
    /** O_DIRECT alignment in bytes, 0 without O_DIRECT. */
    private final int alignment;
    private final ReentrantLock readModifyWrite = new ReentrantLock();
    private final ThreadLocal<ByteBuffer> bounce;
    private volatile boolean closed;

    private FileBackend(Path path, FileChannel channel, boolean readOnly, int alignment, long size) {
        super("file", size, readOnly);
        this.path = path;
        this.channel = channel;
        this.alignment = alignment;
        this.bounce = alignment == 0 ? null
                : ThreadLocal.withInitial(() -> ByteBuffer.allocateDirect(BOUNCE_BYTES + alignment)
                        .alignedSlice(alignment));
    }

    /**
     * Opens the image of {@code spec}.
     *
     * @throws DiskException with one line naming the problem: no path, a missing file, a directory or other
     *     non-regular file, an unreadable or (read-write) unwritable file, a size that is 0 or not a
     *     multiple of 512 (of the block size with O_DIRECT), a size different from a nonzero
     *     {@code spec.sizeBytes()}, a file system that refuses O_DIRECT
     */
    public static FileBackend open(BackendSpec spec) {
        return open(spec, FileChannel::open);
    }

    static FileBackend open(BackendSpec spec, Opener opener) {
        if (spec.path() == null || spec.path().isBlank()) {
            throw new DiskException("a file disk needs the path of an image file");
        }
        Path path;
        try {
            path = Path.of(spec.path());
        } catch (InvalidPathException e) {
            throw new DiskException("invalid image path '" + spec.path() + "': " + e.getReason());
        }
        if (!Files.exists(path)) {
            throw new DiskException("image file '" + path + "' does not exist");
        }
        if (Files.isDirectory(path)) {
            throw new DiskException("'" + path + "' is a directory, not an image file");
        }
        if (!Files.isRegularFile(path)) {
            throw new DiskException("'" + path + "' is not a regular file");
        }
        List<OpenOption> options = new ArrayList<>();
        options.add(StandardOpenOption.READ);
        if (!spec.readOnly()) {
            options.add(StandardOpenOption.WRITE);
        }
        int alignment = 0;
        if (spec.direct()) {
            options.add(directOption());
            alignment = directAlignment(path);
        }
        FileChannel channel;
        try {
            channel = opener.open(path, options.toArray(OpenOption[]::new));
        } catch (AccessDeniedException e) {
            // Permissions are decided by the open itself (as root no mode bit refuses; a read-only mount
            // or an LSM still may), so the message says which access the open was refused.
            throw accessDenied(path, spec.readOnly(), opener);
        } catch (IOException e) {
            if (spec.direct()) {
                throw new DiskException("the file system of '" + path + "' refuses O_DIRECT (" + e.getMessage()
                        + "); attach without direct I/O or move the image");
            }
            throw new DiskException("cannot open image file '" + path + "': " + e.getMessage());
        }
        try {
            long size = channel.size();
            checkSize(path, size, alignment);
            if (spec.sizeBytes() != 0 && spec.sizeBytes() != size) {
                throw new DiskException("image file '" + path + "' has " + size + " bytes, not the " + spec.sizeBytes()
                        + " asked for; resize the disk to change its size");
            }
            return new FileBackend(path, channel, spec.readOnly(), alignment, size);
        } catch (IOException | RuntimeException e) {
            try {
                channel.close();
            } catch (IOException suppressed) {
                e.addSuppressed(suppressed);
            }
            if (e instanceof DiskException d) {
                throw d;
            }
            throw new DiskException("cannot read the size of image file '" + path + "': " + e.getMessage());
        }
    }

    /** The error for an open refused with EACCES/EPERM: not readable, or (read-write) only not writable. */
    private static DiskException accessDenied(Path path, boolean readOnly, Opener opener) {
        if (!readOnly) {
            try (FileChannel probe = opener.open(path, StandardOpenOption.READ)) {
                return new DiskException("image file '" + path + "' is not writable (attach it read-only?)");
            } catch (IOException refused) {
                // not readable either
            }
        }
        return new DiskException("image file '" + path + "' is not readable");
    }

    private static OpenOption directOption() {
        try {
            return com.sun.nio.file.ExtendedOpenOption.DIRECT;
        } catch (NoClassDefFoundError e) {
            throw new DiskException("O_DIRECT is not available: this runtime does not provide "
                    + "com.sun.nio.file.ExtendedOpenOption");
        }
    }

    /** The block size O_DIRECT transfers must be aligned to: the file system's, as the JDK checks it. */
    private static int directAlignment(Path path) {
        long blockSize;
        try {
            blockSize = Files.getFileStore(path).getBlockSize();
        } catch (IOException | UnsupportedOperationException e) {
            blockSize = 4096;
        }
        if (blockSize < VirtioBlk.SECTOR_SIZE || blockSize > BOUNCE_BYTES || Long.bitCount(blockSize) != 1) {
            throw new DiskException("the file system of '" + path + "' reports block size " + blockSize
                    + ", which O_DIRECT transfers cannot be aligned to");
        }
        return (int) blockSize;
    }

    private static void checkSize(Path path, long size, int alignment) {
        if (size <= 0 || size % VirtioBlk.SECTOR_SIZE != 0) {
            throw new DiskException("image file '" + path + "' has " + size
                    + " bytes, not a positive multiple of 512");
        }
        if (alignment != 0 && size % alignment != 0) {
            throw new DiskException("image file '" + path + "' has " + size + " bytes; with O_DIRECT its size must be"
                    + " a multiple of the file system block size " + alignment);
        }
    }

    @Override
    public boolean blocking() {
        return true;
    }

    /** The image file. */
    public Path path() {
        return path;
    }

    /** Whether the file is open with O_DIRECT. */
    public boolean direct() {
        return alignment != 0;
    }

    /** Positional I/O buffer by buffer, or through the aligned bounce buffer with O_DIRECT. */
    @Override
    protected void transfer(long offset, long length, ByteBuffer[] buffers, boolean write) throws IOException {
        if (alignment == 0) {
            long position = offset;
            for (ByteBuffer buffer : buffers) {
                position = write ? writeFully(buffer, position) : readFully(buffer, position);
            }
        } else if (write) {
            writeDirect(offset, length, buffers);
        } else {
            readDirect(offset, length, buffers);
        }
    }

    /** fdatasync: every completed write reaches the disk. */
    @Override
    public void flush() throws IOException {
        checkOpen();
        channel.force(false);
    }

    /** Writes zeroes over the range, {@value #BOUNCE_BYTES} bytes at a time. */
    @Override
    protected void zero(long offset, long length) throws IOException {
        long position = offset;
        long end = offset + length;
        while (position < end) {
            int n = (int) Math.min(BOUNCE_BYTES, end - position);
            ByteBuffer[] zeroes = {ZEROES.duplicate().clear().limit(n)};
            if (alignment == 0) {
                writeFully(zeroes[0], position);
            } else {
                writeDirect(position, n, zeroes);
            }
            position += n;
        }
    }

    /**
     * Shrinks the file (truncate) or grows it with zeroes, then syncs its size (fsync). The only way the
     * image changes size.
     */
    @Override
    public void resize(long newSize) throws IOException {
        checkWritable();
        if (newSize <= 0 || newSize % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IOException("size " + newSize + " is not a positive multiple of 512");
        }
        if (alignment != 0 && newSize % alignment != 0) {
            throw new IOException("size " + newSize + " is not a multiple of the O_DIRECT block size " + alignment);
        }
        resizeLock.writeLock().lock();
        try {
            checkOpen();
            long current = channel.size();
            if (newSize < current) {
                channel.truncate(newSize);
            } else if (newSize > current) {
                // Writing the last bytes extends the file; the gap reads as zeroes (a hole where supported).
                if (alignment == 0) {
                    writeFully(ByteBuffer.allocate(1), newSize - 1);
                } else {
                    ByteBuffer block = ownBounce().clear().limit(alignment);
                    block.put(ZEROES.duplicate().clear().limit(alignment)).flip();
                    writeFully(block, newSize - alignment);
                }
            }
            channel.force(true);
            size = newSize;
        } finally {
            resizeLock.writeLock().unlock();
        }
    }

    /** Closes the file. Idempotent. */
    @Override
    public void close() throws IOException {
        resizeLock.writeLock().lock();
        try {
            closed = true;
            channel.close();
        } finally {
            resizeLock.writeLock().unlock();
        }
    }

    // Direct mode.

    private ByteBuffer ownBounce() {
        return bounce.get();
    }

    private long alignDown(long value) {
        return value & -(long) alignment;
    }

    private long alignUp(long value) {
        return (value + alignment - 1) & -(long) alignment;
    }

    /** Reads the aligned blocks around {@code [offset, offset + length)} and copies the range into {@code dst}. */
    private void readDirect(long offset, long length, ByteBuffer[] dst) throws IOException {
        ByteBuffer block = ownBounce();
        long end = offset + length;
        long position = alignDown(offset);
        long stop = alignUp(end); // within the file: its size is a multiple of the alignment
        Copier out = new Copier(dst);
        while (position < stop) {
            int n = (int) Math.min(block.capacity(), stop - position);
            block.clear().limit(n);
            readFully(block, position);
            long from = Math.max(position, offset);
            long to = Math.min(position + n, end);
            block.limit((int) (to - position)).position((int) (from - position));
            out.fillFrom(block);
            position += n;
        }
    }

    /**
     * Writes {@code [offset, offset + length)} from {@code src} through aligned blocks. A block the range
     * covers only partly is read first; such writes hold {@link #readModifyWrite}.
     */
    private void writeDirect(long offset, long length, ByteBuffer[] src) throws IOException {
        long end = offset + length;
        long start = alignDown(offset);
        long stop = alignUp(end);
        boolean partial = start != offset || stop != end;
        if (partial) {
            readModifyWrite.lock();
        }
        try {
            ByteBuffer block = ownBounce();
            Copier in = new Copier(src);
            long position = start;
            while (position < stop) {
                int n = (int) Math.min(block.capacity(), stop - position);
                long from = Math.max(position, offset);
                long to = Math.min(position + n, end);
                if (from > position) {
                    block.clear().limit(alignment);
                    readFully(block, position);
                }
                if (to < position + n) {
                    block.clear().position(n - alignment).limit(n);
                    readFully(block, position + n - alignment);
                }
                block.clear().position((int) (from - position)).limit((int) (to - position));
                in.drainInto(block);
                block.clear().limit(n);
                writeFully(block, position);
                position += n;
            }
        } finally {
            if (partial) {
                readModifyWrite.unlock();
            }
        }
    }

    /** Moves bytes between a bounce buffer and a sequence of buffers, in order. */
    private static final class Copier {
        private final ByteBuffer[] buffers;
        private int index;

        Copier(ByteBuffer[] buffers) {
            this.buffers = buffers;
        }

        /** Copies {@code from}'s remaining bytes into the buffers. */
        void fillFrom(ByteBuffer from) {
            while (from.hasRemaining()) {
                move(from, current());
            }
        }

        /** Fills {@code to}'s remaining space from the buffers. */
        void drainInto(ByteBuffer to) {
            while (to.hasRemaining()) {
                move(current(), to);
            }
        }

        /** Copies as many of {@code from}'s remaining bytes as {@code to} has room for; advances both. */
        private static void move(ByteBuffer from, ByteBuffer to) {
            int n = Math.min(from.remaining(), to.remaining());
            to.put(from.slice(from.position(), n));
            from.position(from.position() + n);
        }

        private ByteBuffer current() {
            while (!buffers[index].hasRemaining()) {
                index++;
            }
            return buffers[index];
        }
    }

    // Plumbing.

    /** Reads until {@code buffer} is full; the end of the file before that is an error. */
    private long readFully(ByteBuffer buffer, long position) throws IOException {
        while (buffer.hasRemaining()) {
            int n = channel.read(buffer, position);
            if (n < 0) {
                throw new EOFException("image file '" + path + "' ends at byte " + position + ", before the disk's "
                        + size + " bytes");
            }
            position += n;
        }
        return position;
    }

    private long writeFully(ByteBuffer buffer, long position) throws IOException {
        while (buffer.hasRemaining()) {
            position += channel.write(buffer, position);
        }
        return position;
    }

    @Override
    protected String describe() {
        return "image file '" + path + "'";
    }

    @Override
    protected void checkOpen() throws IOException {
        if (closed) {
            throw new IOException("image file '" + path + "' is closed");
        }
    }
}
