package io.kickplug.shell;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.poll.PollCounters;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollPolicy;
import io.kickplug.api.poll.PollStatus;
import io.kickplug.blk.testkit.StubDiskManager;
import io.kickplug.shell.testkit.GogoShell;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** {@code kp:poll} through Gogo's parser against a fake disk manager. */
class PollCommandsGogoTest {

    private boolean requested;
    private boolean policyBound = true;
    /** Status reads after which the disk manager has bound the policy (0: never, when not bound already). */
    private int bindsAfter;
    private int statusReads;
    private PollParams params = PollParams.defaults();

    private final DiskManager disks = new StubDiskManager() {
        @Override
        public PollStatus setPolling(String name, boolean enabled, PollParams p) {
            check(name);
            requested = enabled;
            if (p != null) {
                params = p;
            }
            return pollStatus(name);
        }

        @Override
        public PollStatus pollStatus(String name) {
            check(name);
            if (++statusReads == bindsAfter) {
                policyBound = true;
            }
            return new PollStatus(name, requested, requested && policyBound && params.maxNs() > 0, params,
                    List.of(new PollCounters(12, 3, 4_500_000), PollCounters.NONE));
        }

        private void check(String name) {
            if (!name.equals("d1")) {
                throw new DiskException("no disk named '" + name + "'");
            }
        }
    };

    @RegisterExtension
    final GogoShell shell = new GogoShell();

    @BeforeEach
    void setUp() {
        shell.add("kp", new PollCommands(disks), "poll");
    }

    @Test
    void onWithMaxNsThenStatusThenOff() throws Exception {
        String on = (String) shell.run("kp:poll --poll-max-ns 65536 d1 on");
        assertTrue(on.startsWith("d1: polling on (active), poll-max-ns 65536"), on);
        assertTrue(requested);
        assertEquals(65536, params.maxNs());
        String status = (String) shell.run("kp:poll d1");
        assertTrue(status.contains("\n0                12            3        4.500"), status);
        assertTrue(((String) shell.run("kp:poll d1 off")).startsWith("d1: polling off, poll-max-ns 65536"));
        assertFalse(requested);
    }

    @Test
    void withoutAPolicyTheRequestIsKept() throws Exception {
        policyBound = false;
        assertTrue(((String) shell.run("kp:poll d1 on")).startsWith(
                "d1: polling on (inactive: no poll policy; start the io.kickplug.poll bundle), poll-max-ns 32768"));
    }

    @Test
    void badInputGivesOneLine() {
        assertEquals("invalid mode 'maybe': expected on or off", shell.refusal("kp:poll d1 maybe"));
        assertEquals("invalid --poll-max-ns '-5': expected nanoseconds in 0..1000000000",
                shell.refusal("kp:poll --poll-max-ns -5 d1 on"));
        assertEquals("no disk named 'nope'", shell.refusal(DiskException.class, "kp:poll nope"));
    }

    @Test
    void pollJson() throws Exception {
        String on = (String) shell.run("kp:poll --json --poll-max-ns 65536 d1 on");
        assertTrue(on.startsWith("{\"disk\":\"d1\",\"requested\":true,"), on);
        assertTrue(on.contains("\"poll_max_ns\":65536,\"queues\":[{\"queue\":0,\"hits\":"), on);
        assertEquals(on.substring(0, on.indexOf("\"queues\"")), ((String) shell.run("kp:poll --json d1")).substring(0,
                on.indexOf("\"queues\"")));
    }

    private static final PollPolicy ADAPTIVE = params -> {
        throw new UnsupportedOperationException("the commands do not size windows");
    };

    /** The poll-extension bundle starting while kp:poll runs: the command sees the policy, the disk manager not yet. */
    @Test
    void aPolicyTheCommandSeesIsWaitedForUntilTheDiskManagerTakesItUp() {
        policyBound = false;
        bindsAfter = 3;
        String on = new PollCommands(disks, ADAPTIVE).poll("", false, "d1", "on");
        assertTrue(on.startsWith("d1: polling on (active), poll-max-ns 32768"), on);
        assertEquals(3, statusReads);
    }

    @Test
    void withoutAPolicyInSightTheCommandAnswersAtOnce() {
        policyBound = false;
        String on = new PollCommands(disks, null).poll("", false, "d1", "on");
        assertTrue(on.startsWith("d1: polling on (inactive: no poll policy; start the io.kickplug.poll bundle)"), on);
        assertEquals(1, statusReads, "the answer of setPolling only");
        String zero = new PollCommands(disks, ADAPTIVE).poll("0", false, "d1", "on");
        assertTrue(zero.startsWith("d1: polling on (inactive: poll-max-ns is 0)"), zero);
        assertEquals(2, statusReads, "poll-max-ns 0 is not waited out either");
    }
}
