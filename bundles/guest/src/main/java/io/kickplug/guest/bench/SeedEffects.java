package io.kickplug.guest.bench;

import java.util.Map;

/**
 * Each seed's effect in the measure its magnitude ratio uses ({@link SeedResult#magnitudeRatio}: the measured effect
 * over the published one): the published effect, what the measure is, and its unit. The HTML report's bars and the
 * JSON file's {@code "effect"} member both come from here.
 */
public final class SeedEffects {

    /** An effect that is a percent change. */
    public static final String PERCENT = "percent";
    /** An effect that is a ratio minus one (an IOPS ratio r counts as the gain r - 1). */
    public static final String GAIN = "gain";

    private static final Map<String, Double> PUBLISHED = Map.of("000", 34.0 / 14.0 - 1, "001", -93.0, "002", 9.0,
            "003", 20.0, "004", 517.0 / 254.0 - 1);
    private static final Map<String, String> MEASURE = Map.of(
            "000", "IOPS gain outside-lock over under-lock (ratio - 1)",
            "001", "max hold time change, %",
            "002", "IOPS change defer-call vs immediate at iodepth 64, %",
            "003", "IOPS change hipri=1 vs hipri=0, %",
            "004", "IOPS gain mutex over yielding (ratio - 1)");
    private static final Map<String, String> UNIT = Map.of("000", GAIN, "001", PERCENT, "002", PERCENT, "003", PERCENT,
            "004", GAIN);

    /**
     * Where each seed's set-up comes from: what its post gives, what the code of its time did, and what the model puts
     * in its place where the post gives no figure. Printed with the seed ({@code sources:}, JSON {@code "sources"}).
     */
    private static final Map<String, String> SOURCES = Map.of(
            "000", "from the post: 4 vCPUs, fio randread 4k iodepth 64 numjobs 4 libaio, EVENT_IDX on, arm64"
                    + " qemu-kvm (virtio-mmio, the 3.15 driver's one virtqueue); from QEMU and KVM/arm of 2014:"
                    + " ioeventfd off (no MMIO ioeventfd), avail_event published after every pop, an exit's"
                    + " interrupts delivered when it ends (the BQL); modelled, not in the post: exit 50 us (a slow"
                    + " world switch; the post names none), injection 2 us",
            "001", "from the post: 4 concurrent dd bs=4k iflag=direct (4 psync readers), qemu-kvm-0.12.4 (no"
                    + " ioeventfd for virtio-blk: the notify runs the handler in the exit); modelled, not in the post:"
                    + " exit 10 us (2010's notify to user space; the post names none), model charging (lock maxima)",
            "002", "from the post: randread 4k iodepth 64 (and 1), numjobs 8, 8 vCPUs, one IOThread, baseline no"
                    + " completion batching; modelled, not in the post: 8 queues (QEMU's default, one per vCPU),"
                    + " irqfd write 1 us per interrupt, injection 2 us, null backend (the post names no storage)",
            "003", "from the post: io_uring randread, numjobs 1, iodepth 1, hipri=0 vs 1, one virtqueue, no poll"
                    + " queues (the toggling patch); modelled, not in the post: poll iteration 200 ns, injection"
                    + " 2 us; not modelled: the post's NVMe media time (null backend)",
            "004", "from the post: randread 4k iodepth 64, 4 IOThreads, 8 virtqueues; modelled, not in the post:"
                    + " 8 vCPUs and numjobs 8 (one job per queue), thread wake-up 5 us (mutex waiter), the CoMutex"
                    + " spin of 1000 turns (timed on the host; model charging 20 ns a turn), null backend; model"
                    + " charging only: critical section 400 ns, coroutine switch 100 ns, aio_co_schedule 600 ns,"
                    + " futex wait entry 300 ns");

    private SeedEffects() {
    }

    /** Where seed {@code id}'s set-up comes from ({@link #SOURCES}), or null for an unknown seed. */
    public static String sources(String id) {
        return SOURCES.get(id);
    }

    /** Seed {@code id}'s published effect, or NaN for an unknown seed. */
    public static double published(String id) {
        return PUBLISHED.getOrDefault(id, Double.NaN);
    }

    /** What seed {@code id}'s effect measures, or null for an unknown seed. */
    public static String measure(String id) {
        return MEASURE.get(id);
    }

    /** {@link #PERCENT} or {@link #GAIN}, or null for an unknown seed. */
    public static String unit(String id) {
        return UNIT.get(id);
    }

    /** The measured effect: the published one times the magnitude ratio (NaN when either is not known). */
    public static double measured(SeedResult s) {
        return published(s.id()) * s.magnitudeRatio();
    }
}
