package io.kickplug.guest.engine;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The JVM's total time at safepoints (GC pauses, deoptimizations, ...), read from its own performance-counter file
 * ({@code /tmp/hsperfdata_<user>/<pid>}, HotSpot's {@code sun.rt.safepointTime}, which {@code jcmd PerfCounter.print}
 * shows) through a shared read-only mapping: one memory read, no system call. The JVM adds each safepoint's length
 * when it ends.
 *
 * <p>Why: a wall clock that charges an actor for the time it held the baton ({@link VirtualTime#pinned}) would
 * also charge it a GC pause that stopped it, tens of milliseconds at a time, as if its code had run that long;
 * subtracting the safepoint time keeps the pause out of whichever actor happened to be running.
 *
 * <p>The file's layout (HotSpot's perfMemory.hpp): a 32-byte prologue (magic 0xcafec0c0, byte order, versions,
 * accessible, used, overflow, modification time, entry offset at 24, entry count at 28), then entries of
 * {@code entry_length, name_offset, vector_length (int), data_type, flags, units, variability (byte),
 * data_offset (int)}, each followed by its NUL-terminated name and its data.
 */
public final class SafepointTime {

    static final int MAGIC = 0xcafec0c0;
    static final String COUNTER = "sun.rt.safepointTime";
    static final String FREQUENCY = "sun.os.hrt.frequency";
    private static final VarHandle LONG_BE = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.BIG_ENDIAN);
    private static final VarHandle LONG_LE =
            MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.LITTLE_ENDIAN);

    private final ByteBuffer buffer;
    private final VarHandle longs;
    private final int offset;
    /** Counter ticks per second ({@code sun.os.hrt.frequency}; 1e9 on Linux). */
    private final long frequency;

    private SafepointTime(ByteBuffer buffer, VarHandle longs, int offset, long frequency) {
        this.buffer = buffer;
        this.longs = longs;
        this.offset = offset;
        this.frequency = frequency;
    }

    /** This JVM's counter, or null (not HotSpot, -XX:-UsePerfData, no such file, or a layout not understood). */
    public static SafepointTime ofThisJvm() {
        Path file = Path.of("/tmp", "hsperfdata_" + System.getProperty("user.name"),
                Long.toString(ProcessHandle.current().pid()));
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            return of(ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size()));
        } catch (IOException | RuntimeException e) {
            return null;
        }
    }

    /** The counter in a perfdata buffer (the mapped file, or one a test wrote), or null where it is not found. */
    static SafepointTime of(ByteBuffer data) {
        ByteBuffer b = data.duplicate().order(ByteOrder.BIG_ENDIAN);
        if (b.capacity() < 32 || b.getInt(0) != MAGIC) {
            return null;
        }
        b.order(b.get(4) == 0 ? ByteOrder.BIG_ENDIAN : ByteOrder.LITTLE_ENDIAN);
        int entry = b.getInt(24);
        int count = b.getInt(28);
        int counter = -1;
        long frequency = -1;
        for (int i = 0; i < count && entry > 0 && entry + 20 <= b.capacity(); i++) {
            int length = b.getInt(entry);
            if (length <= 0) {
                break;
            }
            String name = name(b, entry + b.getInt(entry + 4));
            int at = entry + b.getInt(entry + 16);
            boolean aLong = b.get(entry + 12) == 'J' && b.getInt(entry + 8) == 0 && at % 8 == 0
                    && at + 8 <= b.capacity();
            if (aLong && COUNTER.equals(name)) {
                counter = at;
            } else if (aLong && FREQUENCY.equals(name)) {
                frequency = b.getLong(at);
            }
            entry += length;
        }
        if (counter < 0 || frequency <= 0) {
            return null;
        }
        return new SafepointTime(data, b.order() == ByteOrder.BIG_ENDIAN ? LONG_BE : LONG_LE, counter, frequency);
    }

    private static String name(ByteBuffer b, int at) {
        int end = at;
        while (end < b.capacity() && b.get(end) != 0) {
            end++;
        }
        byte[] bytes = new byte[end - at];
        b.get(at, bytes);
        return new String(bytes, StandardCharsets.US_ASCII);
    }

    /** The JVM's total time at safepoints so far, in ns. */
    public long nanos() {
        // Opaque: the JVM writes the mapped counter from another thread; every call must read it anew.
        long ticks = (long) longs.getOpaque(buffer, offset);
        return frequency == 1_000_000_000L ? ticks : (long) (ticks * (1e9 / frequency));
    }
}
