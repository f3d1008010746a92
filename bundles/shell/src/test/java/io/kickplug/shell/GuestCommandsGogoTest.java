package io.kickplug.shell;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.guest.GuestControl;
import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStats;
import io.kickplug.shell.testkit.GogoShell;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** kp:guest and kp:lockstat through Gogo's own parser, with fake services. */
class GuestCommandsGogoTest {

    private GuestSettings settings = new GuestSettings(1, 5000, 2000, "outside-lock");
    private final List<LockStatRow> rows = new ArrayList<>();
    private int resets;

    private final GuestControl control = new GuestControl() {
        @Override
        public GuestSettings settings() {
            return settings;
        }

        @Override
        public GuestSettings configure(GuestSettings s) {
            if (!kickPolicies().contains(s.kickPolicy())) {
                throw new IllegalArgumentException("no kick policy named '" + s.kickPolicy() + "'");
            }
            settings = s;
            return s;
        }

        @Override
        public List<String> kickPolicies() {
            return List.of("outside-lock", "under-lock");
        }
    };

    private final LockStats stats = new LockStats() {
        @Override
        public List<LockStatRow> rows() {
            return rows;
        }

        @Override
        public void reset() {
            resets++;
        }
    };

    @RegisterExtension
    final GogoShell shell = new GogoShell();

    @BeforeEach
    void setUp() {
        GuestCommands commands = new GuestCommands(control, stats);
        shell.add("kp", commands, "guest", "lockstat");
    }

    @Test
    void guestShowsTheSettings() throws Exception {
        String text = (String) shell.run("kp:guest");
        assertEquals(String.format("vcpus              1%n"
                + "exit latency       5000 ns (each notify, busy-waited on the notifying vCPU)%n"
                + "injection latency  2000 ns (each interrupt, busy-waited on the receiving vCPU)%n"
                + "kick policy        outside-lock (available: outside-lock, under-lock)%n"
                + "poll queues        0 (hipri I/O turns its queue's interrupts off while in flight)"), text);
    }

    @Test
    void guestChangesOnlyWhatIsGiven() throws Exception {
        String text = (String) shell.run("kp:guest --vcpus 4 --exit-ns 50000 --kick-policy under-lock");
        assertEquals(new GuestSettings(4, 50000, 2000, "under-lock"), settings);
        assertTrue(text.endsWith("(applies to the next run)"), text);
        shell.run("kp:guest --inject-ns 0");
        assertEquals(new GuestSettings(4, 50000, 0, "under-lock"), settings);
        shell.run("kp:guest --poll-queues 2");
        assertEquals(new GuestSettings(4, 50000, 0, "under-lock", 2), settings);
    }

    @Test
    void guestRefusesBadValuesWithOneLine() {
        assertEquals("invalid --vcpus 'x': expected a positive integer", shell.refusal("kp:guest --vcpus x"));
        assertEquals("invalid --exit-ns '-1': expected nanoseconds, 0 or more", shell.refusal("kp:guest --exit-ns -1"));
        assertEquals("invalid --poll-queues '-1': expected an integer, 0 or more",
                shell.refusal("kp:guest --poll-queues -1"));
        assertEquals("no kick policy named 'sideways'", shell.refusal("kp:guest --kick-policy sideways"));
        assertEquals(new GuestSettings(1, 5000, 2000, "outside-lock"), settings);
    }

    @Test
    void lockstatPrintsLockStatColumnsInMicroseconds() throws Exception {
        assertEquals("no lock statistics yet: no instrumented lock has been used", shell.run("kp:lockstat"));
        rows.add(new LockStatRow("d1 vq0", 7097, 7108, 310, 956_090, 161_165_400, 10771, 5038346, 0, 3_271_810,
                59_016_905_470L));
        String table = (String) shell.run("kp:lockstat");
        String[] lines = table.split("\n");
        assertEquals("lock_stat (times in microseconds)", lines[0]);
        assertEquals(List.of("class", "name", "con-bounces", "contentions", "waittime-min", "waittime-max",
                "waittime-total", "acq-bounces", "acquisitions", "holdtime-min", "holdtime-max", "holdtime-total"),
                List.of(lines[1].trim().split("\\s+")));
        // Seed 001's unmodified row.
        assertEquals(List.of("d1", "vq0:", "7097", "7108", "0.31", "956.09", "161165.40", "10771", "5038346",
                "0.00", "3271.81", "59016905.47"), List.of(lines[3].trim().split("\\s+")));
    }

    @Test
    void lockstatResetResets() throws Exception {
        assertEquals("lock statistics reset", shell.run("kp:lockstat --reset"));
        assertEquals(1, resets);
    }

    @Test
    void withoutTheGuestBundleTheCommandsSaySo() {
        GuestCommands none = new GuestCommands(null, null);
        assertEquals("no simulated guest: the io.kickplug.guest bundle is not active",
                assertThrows(IllegalStateException.class, () -> none.guest("", "", "", "", "", false)).getMessage());
        assertEquals("no lock statistics: the io.kickplug.guest bundle is not active",
                assertThrows(IllegalStateException.class, () -> none.lockstat(false, false)).getMessage());
    }

    @Test
    void everyCommandAndParameterHasADescriptor() {
        assertEquals(2, GogoShell.assertEveryCommandDescribed(GuestCommands.class));
    }
}
