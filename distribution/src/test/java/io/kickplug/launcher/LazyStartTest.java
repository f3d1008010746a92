package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LazyStartTest {

    private static final String GUEST = "io.kickplug.guest";
    private static final String BATCHING = "io.kickplug.batching";
    private static final String POLL = "io.kickplug.poll";
    private static final String GOGO_SHELL = "org.apache.felix.gogo.shell";
    private static final String GOGO_COMMAND = "org.apache.felix.gogo.command";

    private static final String DISK_MANAGER = "io.kickplug.api.blk.DiskManager";
    private static final String NOTIFICATION_CONTROL = "io.kickplug.api.notify.NotificationControl";
    private static final String NOTIFIER = "io.kickplug.api.notify.CompletionNotifier";
    private static final String POLL_POLICY = "io.kickplug.api.poll.PollPolicy";
    private static final String WORKLOADS = "io.kickplug.api.guest.GuestWorkloads";
    private static final String GUEST_CONTROL = "io.kickplug.api.guest.GuestControl";
    private static final String LOCK_STATS = "io.kickplug.api.lockstat.LockStats";

    private static CommandComponents.Command command(String name, List<String> functions, String... references) {
        return new CommandComponents.Command(name, "kp", functions, List.of(references));
    }

    /** The project bundles as their component descriptions say (trimmed to what matters here). */
    private static final Map<String, CommandComponents.Descriptions> BUNDLES = Map.of(
            "io.kickplug.shell", new CommandComponents.Descriptions(List.of(
                    command("KpCommands", List.of("attach", "detach", "disks", "resize"), DISK_MANAGER),
                    command("IoCommand", List.of("io"), WORKLOADS),
                    command("GuestCommands", List.of("guest", "lockstat"), GUEST_CONTROL, LOCK_STATS),
                    command("PollCommands", List.of("poll"), DISK_MANAGER, POLL_POLICY),
                    command("NotifyCommands", List.of("notify", "strategies", "stats"), DISK_MANAGER,
                            NOTIFICATION_CONTROL, NOTIFIER)),
                    Set.of(), Set.of(DISK_MANAGER, WORKLOADS, GUEST_CONTROL, LOCK_STATS, POLL_POLICY,
                            NOTIFICATION_CONTROL, NOTIFIER)),
            // The disk manager binds the poll policy and the strategies: that does not make kp:attach need them.
            "io.kickplug.blk", new CommandComponents.Descriptions(List.of(),
                    Set.of(DISK_MANAGER, NOTIFICATION_CONTROL, LOCK_STATS), Set.of(NOTIFIER, POLL_POLICY)),
            "io.kickplug.vhost", new CommandComponents.Descriptions(
                    List.of(command("VhostCommands", List.of("vhost"), DISK_MANAGER)), Set.of(), Set.of(DISK_MANAGER)),
            GUEST, new CommandComponents.Descriptions(List.of(command("FioCommand", List.of("fio"), DISK_MANAGER),
                    command("BenchCommand", List.of("bench"), DISK_MANAGER)),
                    Set.of(WORKLOADS, GUEST_CONTROL, "io.kickplug.api.guest.KickPolicy"),
                    Set.of(DISK_MANAGER, "io.kickplug.api.guest.KickPolicy")),
            BATCHING, new CommandComponents.Descriptions(List.of(), Set.of(NOTIFIER), Set.of()),
            POLL, new CommandComponents.Descriptions(List.of(), Set.of(POLL_POLICY), Set.of()));

    private static Set<String> startNow(Map<String, CommandComponents.Descriptions> bundles, String... statements) {
        Set<String> now = new HashSet<>(LazyStart.LATER);
        now.removeAll(LazyStart.waiting(bundles, LazyStart.words(List.of(statements))));
        return now;
    }

    private static Set<String> startNow(String... statements) {
        return startNow(BUNDLES, statements);
    }

    @Test
    void aDaemonThatAttachesAndExportsStartsNoneOfThemBeforeItsStatements() {
        assertEquals(Set.of(), startNow("kp:attach --backend null d0 1G",
                "kp:vhost d0 --socket /run/kp/d0.sock --queues 2"));
        assertEquals(LazyStart.LATER, LazyStart.waiting(BUNDLES, Set.of()), "no statements: all wait");
    }

    @Test
    void aBundleStartsBeforeTheStatementsThatUseItsCommands() {
        assertEquals(Set.of(GUEST), startNow("kp:bench seeds"));
        assertEquals(Set.of(GUEST), startNow("x = (fio d0 job.fio)"), "a bare function name counts too");
    }

    /** The report: a daemon's kp:io failed with "the io.kickplug.guest bundle is not active". */
    @Test
    void aBundleStartsBeforeTheStatementsWhenAUsedCommandReferencesAServiceItProvides() {
        assertEquals(Set.of(GUEST), startNow("kp:attach d0 64M; kp:io d0"), "kp:io needs GuestWorkloads");
        assertEquals(Set.of(GUEST), startNow("kp:guest --vcpus 2"), "kp:guest needs GuestControl");
        assertEquals(Set.of(GUEST), startNow("kp:lockstat"));
        assertEquals(Set.of(POLL), startNow("kp:attach d0 64M", "kp:poll d0 on"), "kp:poll needs the poll policy");
        assertEquals(Set.of(BATCHING), startNow("kp:attach d0 64M", "kp:notify d0 bh"), "kp:notify the strategies");
        assertEquals(Set.of(BATCHING), startNow("kp:strategies"));
        assertEquals(Set.of(GUEST, POLL, BATCHING), startNow("kp:io d0; kp:poll d0 on; kp:stats d0"));
    }

    @Test
    void whatABundleThatStartsNowReferencesStartsToo() {
        Map<String, CommandComponents.Descriptions> bundles = new java.util.HashMap<>(BUNDLES);
        // A guest whose engine would need a strategy: kp:io then needs the batching bundle as well.
        CommandComponents.Descriptions guest = BUNDLES.get(GUEST);
        bundles.put(GUEST, new CommandComponents.Descriptions(guest.commands(), guest.provides(), Set.of(NOTIFIER)));
        assertEquals(Set.of(GUEST, BATCHING), startNow(bundles, "kp:io d0"));
        assertEquals(Set.of(), startNow(bundles, "kp:attach d0 1M"));
        // A chain: batching needing the poll policy in turn.
        bundles.put(BATCHING, new CommandComponents.Descriptions(List.of(), Set.of(NOTIFIER), Set.of(POLL_POLICY)));
        assertEquals(Set.of(GUEST, BATCHING, POLL), startNow(bundles, "kp:io d0"));
    }

    @Test
    void onlyTheLaterBundlesEverWait() {
        Set<String> waiting = LazyStart.waiting(BUNDLES, LazyStart.words(List.of("kp:io d0")));
        assertTrue(LazyStart.LATER.containsAll(waiting), waiting::toString);
        assertFalse(waiting.contains("io.kickplug.vhost"));
        assertFalse(waiting.contains("io.kickplug.blk"));
        assertFalse(waiting.contains("org.apache.felix.gogo.runtime"));
    }

    @Test
    void statementsUsingGogoBuiltInsStartTheConsoleBundles() {
        assertEquals(Set.of(GOGO_SHELL), startNow("kp:attach d0 1G", "echo serving"));
        assertEquals(Set.of(GOGO_SHELL), startNow("each [a b] { kp:attach $it 1M }"));
        assertEquals(Set.of(GOGO_SHELL, GOGO_COMMAND), startNow("felix:lb -s io.kickplug"),
                "gogo.shell's converters format what gogo.command returns");
        assertTrue(LazyStart.waiting(BUNDLES, LazyStart.words(List.of("kp:attach d0 1G")))
                .containsAll(Set.of(GOGO_SHELL, GOGO_COMMAND, "org.apache.felix.metatype", "org.apache.felix.log")));
    }

    /** A control-socket statement starts the console bundles a daemon keeps for on demand only when it uses them. */
    @Test
    void aStatementNeedsTheConsoleBundlesOnlyWhenItUsesTheirFunctions() {
        assertEquals(Set.of(), LazyStart.neededNow("kp:attach --backend null d0 1G; kp:vhost d0 --socket /tmp/s"));
        assertEquals(Set.of(), LazyStart.neededNow("kp:disks --json"));
        assertEquals(Set.of(GOGO_SHELL), LazyStart.neededNow("echo hello"));
        assertEquals(Set.of(GOGO_SHELL), LazyStart.neededNow("each [a b] { kp:disks }"));
        assertEquals(Set.of(GOGO_SHELL, GOGO_COMMAND), LazyStart.neededNow("lb"),
                "gogo.shell's converters format what gogo.command returns");
        assertEquals(Set.of(GOGO_SHELL, GOGO_COMMAND), LazyStart.neededNow("felix:update io.kickplug.blk"));
        assertEquals(Set.of(GOGO_SHELL, GOGO_COMMAND), LazyStart.ON_DEMAND);
        assertTrue(LazyStart.LATER.containsAll(LazyStart.ON_DEMAND));
    }
}
