package io.kickplug.guest.transport;

import java.util.function.IntConsumer;
import java.util.function.LongConsumer;
import java.util.function.LongSupplier;

/**
 * The 64 feature bits as two 32-bit words behind a select register, the one way both transports reach them
 * (VIRTIO 1.2 section 4.1.4.3, {@code device_feature_select} and {@code driver_feature_select}; section 4.2.2,
 * {@code DeviceFeaturesSel} and {@code DriverFeaturesSel}): select word 0 for bits 0 to 31, word 1 for bits 32
 * to 63, then access the word. Each transport passes its own register accesses.
 */
final class FeatureWords {

    private FeatureWords() {
    }

    /** The 64 bits: selects each word, then reads it. */
    static long read(IntConsumer select, LongSupplier word) {
        select.accept(0);
        long low = word.getAsLong() & 0xFFFF_FFFFL;
        select.accept(1);
        long high = word.getAsLong() & 0xFFFF_FFFFL;
        return high << 32 | low;
    }

    /** Writes {@code features}: selects each word, then writes it. */
    static void write(long features, IntConsumer select, LongConsumer word) {
        select.accept(0);
        word.accept(features & 0xFFFF_FFFFL);
        select.accept(1);
        word.accept(features >>> 32);
    }
}
