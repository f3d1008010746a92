package io.kickplug.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;

/**
 * Issue 11's acceptance: fio with verify runs on two disks (virtio-mmio and virtio-pci, two queues each)
 * while the transport, virtqueue and block-device bundles are updated {@value #UPDATES_EACH} times each
 * ({@code kickplug.swap.updates}) in a random order. Every fio pass completes exactly the I/Os it submitted
 * (a request completed twice would show as one I/O too many, a lost one as a pass that never ends) and
 * verifies; the guests' longest pause (removal to first completion after the return) is printed.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class HotSwapIT extends DistributionExam {

    private static final int UPDATES_EACH = Integer.getInteger("kickplug.swap.updates", 20);
    private static final List<String> SWAPPED = List.of("io.kickplug.virtio.transport", "io.kickplug.virtqueue.split",
            "io.kickplug.blk");
    private static final List<String> DISKS = List.of("hm", "hp");

    @Override
    protected Option[] extraOptions() {
        return new Option[] {systemProperty("kickplug.swap.updates").value(String.valueOf(UPDATES_EACH))};
    }

    @Test
    public void transportRingAndDeviceUpdatedUnderFioVerifyLoseNothing() throws Exception {
        FioLoad.attachMmioAndPci(disks, DISKS);
        long start = System.nanoTime();
        FioLoad load = new FioLoad(context, DISKS);
        List<String> order = new ArrayList<>();
        for (int i = 0; i < UPDATES_EACH; i++) {
            order.addAll(SWAPPED);
        }
        long seed = Long.getLong("kickplug.swap.seed", System.nanoTime());
        Collections.shuffle(order, new Random(seed));
        int updates = 0;
        for (String bsn : order) {
            load.assertRunning("seed " + seed);
            bundle(bsn).update();
            assertEquals(bsn + " active after its update", Bundle.ACTIVE, bundle(bsn).getState());
            awaitDisks();
            updates++;
        }
        load.finishAndCheck();
        assertEquals(3 * UPDATES_EACH, updates);
        Recoveries recoveries = Recoveries.since(context, start);
        assertTrue("the guests went through recoveries: " + recoveries.count(), recoveries.count() >= updates);
        System.out.printf("HotSwapIT: %d updates (seed %d), %d fio passes, %d guest recoveries, %d requests "
                + "resubmitted, longest pause %.1f ms%n", updates, seed, load.outputs.size(), recoveries.count(),
                recoveries.resubmitted(), recoveries.longestMillis());
        // The injected manager is the block-device bundle's first revision's: ask the current one.
        DiskManager current = InstalledBundles.service(context, DiskManager.class);
        for (String disk : DISKS) {
            DiskInfo info = current.info(disk);
            assertEquals(0, info.requestsInFlight());
            current.detach(disk);
        }
    }

    /** Waits until both disks are attached again (the block-device bundle rebuilds them from configuration). */
    private void awaitDisks() {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (true) {
            DiskManager dm = InstalledBundles.service(context, DiskManager.class);
            if (dm != null) {
                try {
                    List<String> names = dm.list().stream().map(DiskInfo::name).toList();
                    if (names.containsAll(DISKS)) {
                        return;
                    }
                } catch (RuntimeException goingAway) {
                    // replaced meanwhile
                }
            }
            if (System.nanoTime() - deadline > 0) {
                fail("the disks did not come back within 30 s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    private Bundle bundle(String symbolicName) {
        return InstalledBundles.named(context, symbolicName);
    }
}
