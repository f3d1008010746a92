package io.kickplug.shell;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.blk.testkit.StubDiskManager;
import io.kickplug.shell.testkit.GogoShell;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code kp:ring NAME split|packed}: arguments, output, and the call it makes. */
class RingCommandTest {
    private final List<String> calls = new ArrayList<>();
    private final RingCommand command = new RingCommand(new StubDiskManager() {
        @Override
        public DiskInfo setRing(String name, RingFormat format) {
            calls.add(name + "=" + format.id());
            return new DiskInfo(name, 1 << 20, "memory", false, TransportKind.MMIO, 1, 256, 1, 15, 0, 0, null,
                    List.of(), TrackedLockKind.MUTEX, format);
        }
    });

    @Test
    void swapsAndSaysSo() {
        assertEquals("d1: packed rings from now on (the device was reset)", command.run(List.of("d1", "packed")));
        assertEquals("{\"disk\":\"d1\",\"ring\":\"split\"}", command.run(List.of("--json", "d1", "SPLIT")));
        assertEquals(List.of("d1=packed", "d1=split"), calls);
    }

    /** Through Gogo: {@code --json} is a declared {@code @Parameter} now, the answers and refusals are as before. */
    @Test
    void throughGogoTheSameArgumentsGiveTheSameAnswers() throws Exception {
        try (GogoShell shell = new GogoShell().add("kp", command, "ring")) {
            assertEquals("d1: packed rings from now on (the device was reset)", shell.run("kp:ring d1 packed"));
            assertEquals("{\"disk\":\"d1\",\"ring\":\"split\"}", shell.run("kp:ring --json d1 SPLIT"));
            assertEquals(RingCommand.USAGE, shell.refusal("kp:ring d1"));
            assertEquals(RingCommand.USAGE, shell.refusal("kp:ring"));
            assertEquals(RingCommand.USAGE, shell.refusal("kp:ring --json d1 split packed"));
            assertEquals("unknown ring format 'ring' (expected split or packed); " + RingCommand.USAGE,
                    shell.refusal("kp:ring d1 ring"));
        }
        assertEquals(List.of("d1=packed", "d1=split"), calls);
        assertEquals(1, GogoShell.assertEveryCommandDescribed(RingCommand.class));
    }

    @Test
    void badArgumentsSayTheUsage() {
        assertEquals(RingCommand.USAGE, assertThrows(IllegalArgumentException.class,
                () -> command.run(List.of("d1"))).getMessage());
        assertEquals("unknown ring format 'ring' (expected split or packed); " + RingCommand.USAGE,
                assertThrows(IllegalArgumentException.class, () -> command.run(List.of("d1", "ring"))).getMessage());
        assertTrue(calls.isEmpty());
    }
}
