package io.kickplug.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.virtio.RingFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;

/**
 * Issue 14's acceptance: fio with verify runs on two disks (virtio-mmio and virtio-pci, two queues each) while
 * {@code kp:ring}'s operation ({@link DiskManager#setRing}) flips each disk between split and packed rings
 * {@value #SWAPS_EACH} times ({@code kickplug.ring.swaps}). Each flip resets the device; the simulated guest
 * re-probes, negotiates the other format and resubmits. Every fio pass completes exactly the I/Os it submitted
 * and verifies; every recovery succeeds; the last format is the one the disk reports.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class RingSwapIT extends DistributionExam {

    private static final int SWAPS_EACH = Integer.getInteger("kickplug.ring.swaps", 10);
    private static final List<String> DISKS = List.of("rm", "rp");

    @Override
    protected Option[] extraOptions() {
        return new Option[] {systemProperty("kickplug.ring.swaps").value(String.valueOf(SWAPS_EACH))};
    }

    @Test
    public void ringFormatSwappedUnderFioVerifyLosesNothing() throws Exception {
        FioLoad.attachMmioAndPci(disks, DISKS);
        long start = System.nanoTime();
        FioLoad load = new FioLoad(context, DISKS);
        RingFormat ring = RingFormat.SPLIT;
        int swaps = 0;
        for (int i = 0; i < SWAPS_EACH; i++) {
            ring = ring == RingFormat.SPLIT ? RingFormat.PACKED : RingFormat.SPLIT;
            for (String disk : DISKS) {
                load.assertRunning(swaps + " swaps");
                assertEquals(ring, disks.setRing(disk, ring).ring());
                swaps++;
                // Let the guest run on the new rings before the next swap.
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(200));
            }
        }
        load.finishAndCheck();
        Recoveries recoveries = Recoveries.since(context, start);
        assertTrue("the guests went through recoveries: " + recoveries.count(), recoveries.count() >= 2);
        System.out.printf("RingSwapIT: %d ring swaps, %d fio passes, %d guest recoveries, %d requests resubmitted, "
                + "longest pause %.1f ms%n", swaps, load.outputs.size(), recoveries.count(), recoveries.resubmitted(),
                recoveries.longestMillis());
        for (String disk : DISKS) {
            DiskInfo info = disks.info(disk);
            assertEquals(ring, info.ring());
            assertEquals(0, info.requestsInFlight());
            disks.detach(disk);
        }
    }
}
