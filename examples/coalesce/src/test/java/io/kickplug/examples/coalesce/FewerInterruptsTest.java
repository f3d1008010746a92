package io.kickplug.examples.coalesce;

import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.sdk.testkit.InProcessDevice;
import io.kickplug.sdk.testkit.Rule;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What coalescing is for: at QD32 the guest gets fewer interrupts per request than with immediate, on the real
 * device with the simulated guest, and fio verify passes. EVENT_IDX off, so that immediate notifies for each batch the
 * driver has not suppressed (with EVENT_IDX the driver's used_event already suppresses most). The threshold is low (1,000 IOPS) so that any machine's
 * rate is above it; the defaults' 60,000 IOPS is a rate a fast host reaches.
 */
class FewerInterruptsTest {

    private static final List<String> QD32 = List.of("--rw=randwrite", "--bs=4k", "--size=4m", "--ioengine=libaio",
            "--iodepth=32", "--verify=crc32c", "--name=qd32");

    private static double interruptsPerRequest(String strategy) {
        try (InProcessDevice device = new InProcessDevice()) {
            device.addStrategy(CoalescingNotifier.NAME, new CoalescingNotifier(new CoalesceSettings(100, 1_000, 1_000)));
            device.attachMemory(1, 1);
            device.disks().setStrategy(InProcessDevice.DISK, strategy, -1);
            FioReport report = device.fio(InProcessDevice.machine(1, false), QD32);
            InProcessDevice.checkVerified(report, Rule.EVERY_REQUEST_COMPLETES, strategy);
            QueueCounters c = device.disks().counters(InProcessDevice.DISK).get(0);
            return (double) c.interruptsSent() / c.requests();
        }
    }

    @Test
    void fewerInterruptsPerRequestThanImmediateAtQd32() {
        double immediate = interruptsPerRequest(CompletionNotifier.IMMEDIATE);
        double coalesce = interruptsPerRequest(CoalescingNotifier.NAME);
        System.out.printf("interrupts per request at QD32: immediate %.3f, coalesce %.3f%n", immediate, coalesce);
        assertTrue(coalesce < immediate / 2, "coalesce " + coalesce + " vs immediate " + immediate);
    }
}
