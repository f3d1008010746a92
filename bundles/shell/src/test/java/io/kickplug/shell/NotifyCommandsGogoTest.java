package io.kickplug.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.testkit.StubDiskManager;
import io.kickplug.shell.testkit.GogoShell;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/** kp:notify, kp:strategies and kp:stats through Gogo's own parser, with a fake notification control. */
class NotifyCommandsGogoTest {

    private final List<String> bound = new ArrayList<>(List.of("bh", "defer-call", "immediate"));
    private final String[] configured = {"immediate", "immediate"};
    private final List<String> calls = new ArrayList<>();
    /** Queues of the disk's vhost-user export, for kp:stats. */
    private final List<QueueCounters> exported = new ArrayList<>();

    private QueueCounters queue(int q) {
        String used = bound.contains(configured[q]) ? configured[q] : "immediate";
        return new QueueCounters("d1", q, used, configured[q], 100 + q, 409600, 40, 60, 25, 75, 30,
                List.of(10L, 12L, 8L, 0L, 0L, 0L, 0L, 0L, 0L), 2, 3, 0, 0, 0);
    }

    private final NotificationControl control = new NotificationControl() {
        @Override
        public List<QueueCounters> setStrategy(String disk, String strategy, int q) {
            calls.add(disk + " " + strategy + " " + q);
            if (!disk.equals("d1")) {
                throw new DiskException("no disk named '" + disk + "'");
            }
            List<QueueCounters> out = new ArrayList<>();
            for (int i = 0; i < configured.length; i++) {
                if (q < 0 || q == i) {
                    configured[i] = strategy;
                    out.add(queue(i));
                }
            }
            return out;
        }

        @Override
        public List<String> strategies() {
            return bound;
        }

        @Override
        public List<QueueCounters> counters(String disk) {
            if (!disk.equals("d1")) {
                throw new DiskException("no disk named '" + disk + "'");
            }
            return List.of(queue(0), queue(1));
        }

        @Override
        public List<QueueCounters> exportCounters(String disk) {
            return exported;
        }
    };

    private final DiskManager disks = new StubDiskManager() {
        @Override
        public List<DiskInfo> list() {
            return List.of(new DiskInfo("d1", 1 << 20, "memory", false, TransportKind.MMIO, 2, 256, 1, 15, 0, 0));
        }
    };

    @RegisterExtension
    final GogoShell shell = new GogoShell();

    @BeforeEach
    void setUp() {
        NotifyCommands commands = new NotifyCommands(control, disks);
        shell.add("kp", commands, "notify", "strategies", "stats");
    }

    @Test
    void notifySwitchesAllQueuesOrOne() throws Exception {
        assertEquals("d1 queue 0: bh\nd1 queue 1: bh", shell.run("kp:notify d1 bh"));
        assertEquals("d1 queue 1: defer-call", shell.run("kp:notify --queue 1 d1 defer-call"));
        assertEquals(List.of("d1 bh -1", "d1 defer-call 1"), calls);
    }

    @Test
    void notifyToAnUnboundStrategySaysSo() throws Exception {
        assertEquals("d1 queue 0: immediate (configured 'later' is not bound; using immediate until it is)",
                shell.run("kp:notify --queue 0 d1 later"));
    }

    @Test
    void notifyRefusesBadInputWithOneLine() {
        assertEquals("invalid --queue '-2': expected a queue number, 0 or more",
                shell.refusal("kp:notify --queue -2 d1 bh"));
        assertEquals("no disk named 'zz'", shell.refusal(DiskException.class, "kp:notify zz bh"));
    }

    @Test
    void strategiesListsBoundOnesAndWhoUsesThem() throws Exception {
        shell.run("kp:notify --queue 1 d1 bh");
        shell.run("kp:notify --queue 0 d1 gone");
        String text = (String) shell.run("kp:strategies");
        String[] lines = text.split("\n");
        assertEquals(List.of("strategy", "bound", "queues", "(disk:queue,...)"), List.of(lines[0].trim().split("\\s+")));
        assertEquals(List.of("bh", "yes", "d1:1"), List.of(lines[1].trim().split("\\s+")));
        assertEquals(List.of("defer-call", "yes", "-"), List.of(lines[2].trim().split("\\s+")));
        assertEquals("gone        no        configured, waiting: d1:0", lines[3]);
        assertEquals(List.of("immediate", "built-in", "d1:0"), List.of(lines[4].trim().split("\\s+")));
    }

    @Test
    void statsTableAndJson() throws Exception {
        String text = (String) shell.run("kp:stats d1");
        String[] lines = text.split("\n");
        assertEquals("disk d1", lines[0]);
        assertEquals(List.of("queue", "strategy", "requests", "bytes", "kicks", "kicks-supp", "irqs", "irqs-supp",
                "req/irq", "batches", "in-flight", "switches", "poll-hits", "poll-miss", "poll-us"),
                List.of(lines[1].trim().split("\\s+")));
        assertEquals(List.of("0", "immediate", "100", "409600", "40", "60", "25", "75", "4.00", "30", "2", "3", "0",
                "0", "0"), List.of(lines[2].trim().split("\\s+")));
        assertTrue(text.contains("  q1: 1=10 2-3=12 4-7=8 8-15=0"), text);
        String json = (String) shell.run("kp:stats --json d1");
        assertTrue(json.startsWith("{\"disk\": \"d1\", \"queues\": [{\"queue\": 0, \"strategy\": \"immediate\", "
                + "\"configured\": \"immediate\", \"requests\": 100, \"bytes\": 409600, \"avail_notifications\": 40, "
                + "\"avail_suppressed\": 60, \"interrupts_sent\": 25, \"interrupts_suppressed\": 75, \"batches\": 30, "
                + "\"in_flight\": 2, \"switches\": 3, \"poll_hits\": 0, \"poll_misses\": 0, \"poll_ns\": 0, "
                + "\"batch_histogram\": {\"1\": 10, \"2-3\": 12, \"4-7\": 8,"), json);
        assertTrue(json.endsWith("}}]}"), json);
    }

    @Test
    void statsShowTheVhostUserExportAfterTheLocalQueues() throws Exception {
        exported.add(new QueueCounters("d1", 0, "bh", "bh", 7, 28672, 5, 2, 4, 3, 4,
                List.of(4L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L), 1, 1, 0, 0, 0));
        String text = (String) shell.run("kp:stats d1");
        int section = text.indexOf("\nvhost-user export\ndisk d1\n");
        assertTrue(section > text.indexOf("  q1: "), "the export follows the local queues: " + text);
        String[] after = text.substring(section).split("\n");
        assertEquals(List.of("0", "bh", "7", "28672", "5", "2", "4", "3", "1.75", "4", "1", "1", "0", "0", "0"),
                List.of(after[4].trim().split("\\s+")));
        String json = (String) shell.run("kp:stats --json d1");
        assertTrue(json.contains("}}], \"vhost_user_export\": [{\"queue\": 0, \"strategy\": \"bh\""), json);
        assertTrue(json.endsWith("}}]}"), json);
    }

    /** Live migration: each export's dirty log (whether it logs, pages marked) after the queues, text and JSON. */
    @Test
    void statsShowTheExportsDirtyLog() throws Exception {
        io.kickplug.api.transport.ExportStatus vhost = new io.kickplug.api.transport.ExportStatus() {
            @Override
            public List<Export> exports() {
                return List.of(new Export("d1", "vhost-user", "/run/d1.sock", "connected"));
            }

            @Override
            public List<DirtyLog> dirtyLogs() {
                return List.of(new DirtyLog("other", "vhost-user", false, 5), new DirtyLog("d1", "vhost-user", true,
                        1234));
            }
        };
        NotifyCommands commands = new NotifyCommands(control, disks).withExports(List.of(vhost));
        String text = commands.stats(false, "d1");
        assertTrue(text.endsWith("\nvhost-user export dirty log (live migration): logging, 1234 pages marked"), text);
        String json = commands.stats(true, "d1");
        assertTrue(json.endsWith(", \"dirty_log\": [{\"kind\": \"vhost-user\", \"logging\": true, "
                + "\"pages_marked\": 1234}]}"), json);
        assertTrue(!commands.stats(false, "d1").contains("5 pages"), "another disk's log is not shown");
        // Without an exporter that logs (the default), nothing is added.
        io.kickplug.api.transport.ExportStatus plain = () -> List.of();
        assertTrue(!new NotifyCommands(control, disks).withExports(List.of(plain)).stats(true, "d1")
                .contains("dirty_log"));
    }

    /** Calls of {@link #late}'s strategies(); on the third, the disk manager has bound "bh". */
    private int strategiesAsked;

    /** The notification control of a disk manager that binds "bh" a moment after the commands see it registered. */
    private final NotificationControl late = new NotificationControl() {
        @Override
        public List<QueueCounters> setStrategy(String disk, String strategy, int queue) {
            return control.setStrategy(disk, strategy, queue);
        }

        @Override
        public List<String> strategies() {
            if (++strategiesAsked == 3) {
                bound.add(0, "bh");
            }
            return List.copyOf(bound);
        }

        @Override
        public List<QueueCounters> counters(String disk) {
            return control.counters(disk);
        }
    };

    private static final List<Map<String, Object>> BH_REGISTERED = List.of(Map.of(CompletionNotifier.PROPERTY, "bh"));

    @Test
    void notifyWaitsForTheDiskManagerToTakeUpAStrategyThatIsRegistered() {
        bound.remove("bh");
        NotifyCommands commands = new NotifyCommands(late, disks, BH_REGISTERED);
        assertEquals("d1 queue 0: bh\nd1 queue 1: bh", commands.notify("", false, "d1", "bh"));
        assertEquals(3, strategiesAsked);
    }

    /** The disk manager ignores a strategy whose name it refuses: listing never waits for one to be taken up. */
    @Test
    void strategiesListWhatIsBoundWithoutWaiting() {
        bound.remove("bh");
        List<Map<String, Object>> registered = List.of(Map.of(CompletionNotifier.PROPERTY, "Not A Name"),
                Map.of(CompletionNotifier.PROPERTY, "bh"));
        String text = new NotifyCommands(late, disks, registered).strategies(false);
        assertEquals(1, strategiesAsked, "asked once, for the listing");
        assertTrue(text.split("\n")[1].trim().startsWith("defer-call "), text);
    }

    @Test
    void aStrategyThatIsNotRegisteredIsNotWaitedFor() {
        bound.remove("bh");
        NotifyCommands commands = new NotifyCommands(late, disks, List.of());
        assertEquals("d1 queue 0: immediate (configured 'bh' is not bound; using immediate until it is)",
                commands.notify("0", false, "d1", "bh"));
        assertEquals(0, strategiesAsked, "nothing to wait for: answered at once");
    }
}
