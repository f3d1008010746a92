package io.kickplug.api.memory;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.lang.reflect.Field;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;

/**
 * Unmaps a {@link MappedByteBuffer} at once instead of when the garbage collector finds it unreachable. Java 17
 * has no public unmap; {@code sun.misc.Unsafe.invokeCleaner} (module jdk.unsupported, which opens
 * {@code sun.misc} to everyone) runs the buffer's cleaner, which munmaps it. The class is looked up through
 * the platform class loader by name, so the bundle imports nothing from {@code sun.misc}.
 *
 * <p>After {@link #unmap} the buffer and every duplicate or slice of it point at unmapped memory: the caller
 * must have made sure that no thread touches any of them any more (an access would crash the JVM). The
 * vhost-user back-end calls it only after the device was reset, which waits until its I/O threads are out of the
 * rings and every request in flight has completed; an in-process disk's guest memory only when its last
 * {@link MemoryLease} closed. Shared here (api) because both the vhost-user and the block-device bundle unmap.
 */
public final class Unmapper {

    private static final Logger LOG = System.getLogger(Unmapper.class.getName());
    /** {@code Unsafe.invokeCleaner(ByteBuffer)} bound to the Unsafe instance, or {@code null} when unavailable. */
    private static final MethodHandle INVOKE_CLEANER = lookup();

    private Unmapper() {
    }

    private static MethodHandle lookup() {
        try {
            Class<?> unsafeClass = Class.forName("sun.misc.Unsafe", true, ClassLoader.getPlatformClassLoader());
            Field theUnsafe = unsafeClass.getDeclaredField("theUnsafe");
            theUnsafe.setAccessible(true);
            Object unsafe = theUnsafe.get(null);
            return MethodHandles.lookup()
                    .findVirtual(unsafeClass, "invokeCleaner", MethodType.methodType(void.class, ByteBuffer.class))
                    .bindTo(unsafe);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.log(Level.WARNING, "mapped guest memory cannot be unmapped explicitly (" + e
                    + "); it is unmapped when the garbage collector frees it");
            return null;
        }
    }

    /** Whether {@link #unmap} really unmaps (false: it leaves the buffers to the garbage collector). */
    public static boolean available() {
        return INVOKE_CLEANER != null;
    }

    /**
     * Unmaps {@code buffer}, the buffer {@link java.nio.channels.FileChannel#map} returned (not a slice or a
     * duplicate of it). Never throws.
     *
     * @return true when it was unmapped now
     */
    public static boolean unmap(MappedByteBuffer buffer) {
        if (buffer == null || INVOKE_CLEANER == null) {
            return false;
        }
        try {
            INVOKE_CLEANER.invokeExact((ByteBuffer) buffer);
            return true;
        } catch (Throwable e) {
            // IllegalArgumentException for a slice or duplicate: a bug of the caller's, logged, left to the GC.
            LOG.log(Level.ERROR, "cannot unmap a guest memory buffer: " + e);
            return false;
        }
    }
}
