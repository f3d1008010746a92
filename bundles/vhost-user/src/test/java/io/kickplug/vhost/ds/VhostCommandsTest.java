package io.kickplug.vhost.ds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kickplug.vhost.server.VhostExports;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The arguments of kp:vhost, kp:vhost-list and kp:vhost-stop, parsed by the shared {@code OptionArgs}. */
class VhostCommandsTest {

    /** No export is made: every case below is refused before the exports are asked. */
    private final VhostExports exports = new VhostExports(null, null, null);

    private String vhostError(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> VhostCommands.vhost(exports, List.of(args)))
                .getMessage();
    }

    @Test
    void vhostNeedsADiskAndASocket() {
        assertEquals(VhostCommands.USAGE, vhostError("d0"));
        assertEquals(VhostCommands.USAGE, vhostError("--socket", "/tmp/x.sock"));
        assertEquals(VhostCommands.USAGE, vhostError("--json", "--socket=/tmp/x.sock"));
        assertEquals(VhostCommands.USAGE, vhostError("--fd", "3"));
        assertEquals("--socket and --fd exclude each other; " + VhostCommands.USAGE,
                vhostError("d0", "--socket", "/s", "--fd", "3"));
        assertEquals("'x' is not a descriptor number (and no LISTEN_FDNAMES of systemd's socket activation for this "
                + "process names it)", vhostError("d0", "--fd", "x"));
    }

    @Test
    void vhostRefusesTwoDisksUnknownOptionsBadCountsAndRepeats() {
        assertEquals("one disk per export; " + VhostCommands.USAGE, vhostError("d0", "d1", "--socket", "/s"));
        assertEquals("unknown option --sock; " + VhostCommands.USAGE, vhostError("d0", "--sock", "/s"));
        assertEquals("--queues two is not a number; " + VhostCommands.USAGE,
                vhostError("d0", "--socket", "/s", "--queues", "two"));
        assertEquals("--queues needs a value", vhostError("d0", "--socket", "/s", "--queues"));
        assertEquals("--socket is given twice", vhostError("d0", "--socket", "/s", "--socket=/t"));
    }

    @Test
    void listTakesOnlyJson() {
        assertEquals("usage: kp:vhost-list [--json]", assertThrows(IllegalArgumentException.class,
                () -> VhostCommands.list(exports, List.of("d0"))).getMessage());
        assertEquals("usage: kp:vhost-list [--json]", assertThrows(IllegalArgumentException.class,
                () -> VhostCommands.list(exports, List.of("--queues", "2"))).getMessage());
        assertEquals("{\"exports\":[]}", VhostCommands.list(exports, List.of("--json")));
    }

    @Test
    void stopTakesOneDiskAndJson() {
        String usage = "usage: kp:vhost-stop [--json] <disk>";
        assertEquals(usage, assertThrows(IllegalArgumentException.class,
                () -> VhostCommands.stop(exports, List.of())).getMessage());
        assertEquals(usage, assertThrows(IllegalArgumentException.class,
                () -> VhostCommands.stop(exports, List.of("--json", "a", "b"))).getMessage());
        assertEquals(usage, assertThrows(IllegalArgumentException.class,
                () -> VhostCommands.stop(exports, List.of("a", "--force", "x"))).getMessage());
    }
}
