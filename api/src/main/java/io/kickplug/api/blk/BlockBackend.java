package io.kickplug.api.blk;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.function.LongConsumer;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * Where a disk's bytes live. Offsets and lengths are in bytes; the device has already checked them
 * against {@link #size()}. Methods may be called from several threads at once for disjoint ranges.
 */
@ConsumerType
public interface BlockBackend extends AutoCloseable {

    /** "memory", "file", "null", ... */
    String kind();

    /** Current size in bytes, a multiple of 512. */
    long size();

    boolean readOnly();

    /**
     * True when calls may block on I/O (file), so the device runs them on a worker pool; false when they
     * complete in memory and the I/O thread may run them inline.
     */
    boolean blocking();

    /** Fills {@code dst} (their remaining bytes, in order) from {@code offset}. */
    void read(long offset, ByteBuffer[] dst) throws IOException;

    /** Writes {@code src} (their remaining bytes, in order) at {@code offset}. */
    void write(long offset, ByteBuffer[] src) throws IOException;

    /** Makes every completed write durable. */
    void flush() throws IOException;

    /** Whether {@link #discard} does anything. */
    default boolean supportsDiscard() {
        return false;
    }

    /** Drops the range; later reads return unspecified data (zeroes for Kickplug's backends). */
    default void discard(long offset, long length) throws IOException {
        throw new UnsupportedOperationException("discard is not supported by the " + kind() + " backend");
    }

    /** Whether {@link #writeZeroes} is supported. */
    default boolean supportsWriteZeroes() {
        return false;
    }

    /** Makes later reads of the range return zeroes, unmapping it when {@code mayUnmap}. */
    default void writeZeroes(long offset, long length, boolean mayUnmap) throws IOException {
        throw new UnsupportedOperationException("write-zeroes is not supported by the " + kind() + " backend");
    }

    /** Changes the size (a multiple of 512). */
    default void resize(long newSize) throws IOException {
        throw new UnsupportedOperationException("resize is not supported by the " + kind() + " backend");
    }

    /**
     * Asks to be told when the storage changes size by itself, not through {@link #resize}: another client resized
     * a shared image (Ceph RBD). The backend calls {@code listener} with the new size, from a thread of its own that
     * holds none of its locks, and keeps answering {@link #size()} with the old one until the disk resizes it to the
     * new size through {@link #resize}, which then takes note without changing the storage. The disk tells the guest
     * as it does for any resize. {@code null} stops the calls. The default does nothing: the storage of the
     * product's other backends changes size only through {@link #resize}.
     *
     * @since 1.9
     */
    default void watchSize(LongConsumer listener) {
    }

    /** Releases the storage (memory, file handle). Idempotent. */
    @Override
    void close() throws IOException;
}
