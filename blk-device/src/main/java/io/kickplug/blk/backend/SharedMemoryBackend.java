package io.kickplug.blk.backend;

import io.kickplug.api.blk.VirtioBlk;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * A memory disk whose bytes live in a named shared-memory file (tmpfs, {@code /dev/shm}) rather than in
 * this bundle's heap or direct buffers, so that they outlive the bundle: when the block-device bundle is
 * updated or restarted, its next version opens the same file again and finds the disk as it was. The file is
 * sparse (tmpfs allocates pages on their first write; holes read as zeroes without allocating) and is
 * accessed with positional reads and writes, which on tmpfs are memory copies that never wait for a
 * device, so the backend is not {@linkplain #blocking() blocking}.
 *
 * <p>Closing the backend closes the channel and keeps the file; whoever owns the disk's lifetime (the disk
 * registry: at detach, or when the runtime stops) deletes it.
 *
 * <p>Thread-safety: positional channel I/O; calls on disjoint ranges may run concurrently.
 */
public final class SharedMemoryBackend extends BackendBase {

    private static final int ZERO_CHUNK = 64 << 10;

    private final Path file;
    private final FileChannel channel;

    private SharedMemoryBackend(Path file, FileChannel channel, long size, boolean readOnly) {
        super("memory", size, readOnly);
        this.file = file;
        this.channel = channel;
    }

    /**
     * Opens (or creates) {@code file} as a disk of {@code size} bytes: a new file is extended (sparse) to the
     * size; an existing one keeps its contents, and is extended or cut to the size.
     */
    public static SharedMemoryBackend open(Path file, long size, boolean readOnly) throws IOException {
        if (size <= 0 || size % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IOException("memory disk size " + size + " is not a positive multiple of 512");
        }
        FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE);
        try {
            setLength(channel, size);
        } catch (IOException | RuntimeException e) {
            channel.close();
            throw e;
        }
        return new SharedMemoryBackend(file, channel, size, readOnly);
    }

    /** Sparse extension (a one-byte write at the end) or truncation. */
    private static void setLength(FileChannel channel, long size) throws IOException {
        long current = channel.size();
        if (current > size) {
            channel.truncate(size);
        } else if (current < size) {
            channel.write(ByteBuffer.allocate(1), size - 1);
        }
    }

    @Override
    protected String describe() {
        return "the memory disk";
    }

    /** The shared-memory file holding the disk's bytes. */
    public Path file() {
        return file;
    }

    @Override
    public boolean blocking() {
        return false;
    }

    @Override
    public void read(long offset, ByteBuffer[] dst) throws IOException {
        checkRange(offset, length(dst));
        long position = offset;
        for (ByteBuffer buffer : dst) {
            while (buffer.hasRemaining()) {
                int n = channel.read(buffer, position);
                if (n < 0) {
                    throw new IOException("shared-memory file " + file + " ended at " + position);
                }
                position += n;
            }
        }
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        checkWritable();
        checkRange(offset, length(src));
        long position = offset;
        for (ByteBuffer buffer : src) {
            while (buffer.hasRemaining()) {
                position += channel.write(buffer, position);
            }
        }
    }

    /** Nothing to flush: the bytes are in memory (tmpfs), and that is what a memory disk promises. */
    @Override
    public void flush() throws IOException {
        if (!channel.isOpen()) {
            throw new IOException("the memory disk is closed");
        }
    }

    /** Writes zeroes (Java 17 cannot punch holes); later reads return zeroes. */
    @Override
    public void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        checkWritable();
        checkRange(offset, length);
        ByteBuffer zeroes = ByteBuffer.allocate((int) Math.min(ZERO_CHUNK, Math.max(1, length)));
        long position = offset;
        long end = offset + length;
        while (position < end) {
            zeroes.clear().limit((int) Math.min(zeroes.capacity(), end - position));
            while (zeroes.hasRemaining()) {
                position += channel.write(zeroes, position);
            }
        }
    }

    @Override
    public synchronized void resize(long newSize) throws IOException {
        checkWritable();
        if (newSize <= 0 || newSize % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IOException("memory disk size " + newSize + " is not a positive multiple of 512");
        }
        setLength(channel, newSize);
        size = newSize;
    }

    /** Closes the channel; the file and its bytes stay. Idempotent. */
    @Override
    public void close() throws IOException {
        channel.close();
    }
}
