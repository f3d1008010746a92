package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

/** The JVM's safepoint time from its perfdata file: the layout, both byte orders, and the live counter. */
class SafepointTimeTest {

    /** A perfdata buffer: the prologue, then one entry per name with a long value; returns the buffer. */
    private static ByteBuffer perfdata(ByteOrder order, String[] names, long[] values, int[] dataOffsets) {
        ByteBuffer b = ByteBuffer.allocate(4096);
        b.order(ByteOrder.BIG_ENDIAN).putInt(0, SafepointTime.MAGIC);
        b.put(4, (byte) (order == ByteOrder.BIG_ENDIAN ? 0 : 1));
        b.order(order);
        int entry = 64;
        b.putInt(24, entry);
        b.putInt(28, names.length);
        for (int i = 0; i < names.length; i++) {
            byte[] name = names[i].getBytes(StandardCharsets.US_ASCII);
            int nameOffset = 20;
            int dataOffset = (nameOffset + name.length + 1 + 7) / 8 * 8;
            int length = dataOffset + 8;
            b.putInt(entry, length);
            b.putInt(entry + 4, nameOffset);
            b.putInt(entry + 8, 0); // a scalar
            b.put(entry + 12, (byte) 'J');
            b.putInt(entry + 16, dataOffset);
            b.put(entry + nameOffset, name);
            b.putLong(entry + dataOffset, values[i]);
            dataOffsets[i] = entry + dataOffset;
            entry += length;
        }
        return b;
    }

    @Test
    void readsTheCounterInEitherByteOrderAndEachTimeAnew() {
        for (ByteOrder order : new ByteOrder[] {ByteOrder.LITTLE_ENDIAN, ByteOrder.BIG_ENDIAN}) {
            int[] at = new int[3];
            ByteBuffer b = perfdata(order, new String[] {"sun.rt.safepoints", SafepointTime.COUNTER,
                SafepointTime.FREQUENCY}, new long[] {7, 123_456, 1_000_000_000L}, at);
            SafepointTime t = SafepointTime.of(b);
            assertNotNull(t, order.toString());
            assertEquals(123_456, t.nanos(), order.toString());
            b.order(order).putLong(at[1], 5_000_000);
            assertEquals(5_000_000, t.nanos(), "the counter is read anew: " + order);
        }
    }

    @Test
    void convertsTicksAtTheCountersFrequency() {
        SafepointTime t = SafepointTime.of(perfdata(ByteOrder.LITTLE_ENDIAN, new String[] {SafepointTime.FREQUENCY,
            SafepointTime.COUNTER}, new long[] {1_000_000, 42}, new int[2]));
        assertEquals(42_000, t.nanos());
    }

    @Test
    void anotherLayoutGivesNoCounter() {
        assertNull(SafepointTime.of(perfdata(ByteOrder.LITTLE_ENDIAN, new String[] {SafepointTime.FREQUENCY},
                new long[] {1_000_000_000L}, new int[1])), "no safepoint counter");
        assertNull(SafepointTime.of(perfdata(ByteOrder.LITTLE_ENDIAN, new String[] {SafepointTime.COUNTER},
                new long[] {5}, new int[1])), "no frequency");
        ByteBuffer bad = perfdata(ByteOrder.LITTLE_ENDIAN, new String[] {SafepointTime.COUNTER,
            SafepointTime.FREQUENCY}, new long[] {5, 1_000_000_000L}, new int[2]);
        bad.order(ByteOrder.BIG_ENDIAN).putInt(0, 0x12345678);
        assertNull(SafepointTime.of(bad), "bad magic");
        assertNull(SafepointTime.of(ByteBuffer.allocate(16)), "too short");
    }

    @Test
    void aFullGcAddsToThisJvmsSafepointTime() {
        SafepointTime t = SafepointTime.ofThisJvm();
        assumeTrue(t != null, "no perfdata file (not HotSpot, or -XX:-UsePerfData)");
        long before = t.nanos();
        System.gc(); // a full collection, at a safepoint
        assertTrue(t.nanos() > before, "safepoint time did not grow over a System.gc(): " + before);
    }
}
