package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kickplug.api.lockstat.LockCounters;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStatSource;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The kp:lockstat table, hosted by the device bundle: every source's rows, whichever sources come and go. */
class LockStatsComponentTest {

    /** A source of one lock class. */
    private static final class Source implements LockStatSource {
        final String name;
        final LockCounters counters = new LockCounters();

        Source(String name) {
            this.name = name;
        }

        @Override
        public List<LockStatRow> lockStats() {
            return List.of(counters.row(name));
        }

        @Override
        public void resetLockStats() {
            counters.reset();
        }
    }

    @Test
    void mergesSourcesSortedAndKeepsTheDeviceRowsWhenTheGuestSourceGoes() {
        LockStatsComponent table = new LockStatsComponent();
        Source guest = new Source("d vq0");
        Source device = new Source("d tracked-mutex");
        table.addSource(guest);
        table.addSource(device);
        guest.counters.acquired(false, -1);
        device.counters.contended(true);
        device.counters.acquired(true, 200);
        device.counters.released(50);

        assertEquals(List.of("d tracked-mutex", "d vq0"), table.rows().stream().map(LockStatRow::name).toList());
        LockStatRow d = table.rows().get(0);
        assertEquals(List.of(1L, 1L, 200L, 200L, 200L, 1L, 1L, 50L, 50L, 50L), List.of(d.conBounces(), d.contentions(),
                d.waittimeMinNs(), d.waittimeMaxNs(), d.waittimeTotalNs(), d.acqBounces(), d.acquisitions(),
                d.holdtimeMinNs(), d.holdtimeMaxNs(), d.holdtimeTotalNs()));

        table.removeSource(guest); // the guest bundle stops
        assertEquals(List.of("d tracked-mutex"), table.rows().stream().map(LockStatRow::name).toList());

        table.reset();
        LockStatRow zero = table.rows().get(0);
        assertEquals(0, zero.acquisitions() + zero.contentions() + zero.waittimeMinNs() + zero.holdtimeMaxNs());
    }
}
