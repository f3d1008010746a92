package io.kickplug.vhost.backend;

import java.nio.MappedByteBuffer;

/**
 * Unmaps a {@link MappedByteBuffer} at once instead of when the garbage collector finds it unreachable: the
 * back-end's name for {@link io.kickplug.api.memory.Unmapper}, which holds the mechanism (shared with the
 * block-device bundle, which unmaps in-process guest memory).
 *
 * <p>After {@link #unmap} the buffer and every duplicate or slice of it point at unmapped memory: the caller
 * must have made sure that no thread touches any of them any more (an access would crash the JVM). The
 * backend calls it only after the device was reset, which waits until its I/O threads are out of the rings
 * and every request in flight has completed.
 */
public final class Unmapper {

    private Unmapper() {
    }

    /** Whether {@link #unmap} really unmaps (false: it leaves the buffers to the garbage collector). */
    public static boolean available() {
        return io.kickplug.api.memory.Unmapper.available();
    }

    /**
     * Unmaps {@code buffer}, the buffer {@link java.nio.channels.FileChannel#map} returned (not a slice or a
     * duplicate of it). Never throws.
     *
     * @return true when it was unmapped now
     */
    public static boolean unmap(MappedByteBuffer buffer) {
        return io.kickplug.api.memory.Unmapper.unmap(buffer);
    }
}
