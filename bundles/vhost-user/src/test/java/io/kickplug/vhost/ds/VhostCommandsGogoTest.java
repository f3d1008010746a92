package io.kickplug.vhost.ds;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.shell.testkit.GogoShell;
import io.kickplug.vhost.server.VhostExports;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

/**
 * kp:vhost, kp:vhost-list and kp:vhost-stop through Gogo's own parser and coercion: the options declared as
 * {@code @Parameter}s (and the hyphenated commands as {@code _main}) take the same arguments as the Functions they
 * replaced, with the same answers and the same one-line refusals.
 */
class VhostCommandsGogoTest {

    @RegisterExtension
    final GogoShell shell = new GogoShell();

    @TempDir
    Path dir;

    private final List<BackendFactory> factories = List.of(new MemoryBackendFactory());
    private final DiskRegistry registry = InProcessHost.registry(() -> factories);
    private final VhostExports exports = new VhostExports(registry, new VirtqueueFactoryComponent(),
            new GuestMemoryFactoryComponent());

    {
        VhostCommands vhost = new VhostCommands(exports);
        shell.add("kp", vhost, "vhost").add("kp", new VhostStopCommand(vhost), "vhost-stop")
                .add("kp", new VhostListCommand(vhost), "vhost-list");
    }

    @AfterEach
    void close() {
        exports.close();
        registry.close();
    }

    @Test
    void everyCommandAndParameterIsDescribed() {
        assertEquals(1, GogoShell.assertEveryCommandDescribed(VhostCommands.class));
        assertEquals(1, GogoShell.assertEveryCommandDescribed(VhostStopCommand.class));
        assertEquals(1, GogoShell.assertEveryCommandDescribed(VhostListCommand.class));
    }

    @Test
    void exportsListsAndStopsWithOptionsAnywhereAndInEitherForm() throws Exception {
        registry.attach(DiskSpec.memory("d0", 1 << 20));
        registry.attach(DiskSpec.memory("d1", 1 << 20));
        Path s0 = dir.resolve("d0.sock");
        Path s1 = dir.resolve("d1.sock");
        String made = (String) shell.run("kp:vhost d0 --socket " + s0 + " --queues 2");
        assertTrue(made.startsWith("DISK") && made.contains("d0 ") && made.contains(s0.toString()), made);
        assertTrue(Files.exists(s0));
        // --name=value, as the Function took it; --json before the disk
        String json = (String) shell.run("kp:vhost --json --socket=" + s1 + " d1");
        assertTrue(json.startsWith("{\"exports\":[{\"disk\":\"d1\""), json);
        String list = (String) shell.run("kp:vhost-list");
        assertTrue(list.contains("d0 ") && list.contains("d1 "), list);
        assertTrue(((String) shell.run("kp:vhost-list --json")).contains("\"disk\":\"d0\""));
        assertEquals("stopped the vhost-user export of d0", shell.run("kp:vhost-stop d0"));
        assertEquals("{\"stopped\":\"d1\"}", shell.run("kp:vhost-stop d1 --json"));
        assertEquals("no vhost-user exports", shell.run("kp:vhost-list"));
        assertEquals("{\"exports\":[]}", shell.run("kp:vhost-list --json"));
    }

    @Test
    void refusalsAreTheOneLineUsagesTheyWere() {
        assertEquals(VhostCommands.USAGE, shell.refusal("kp:vhost d0"));
        assertEquals(VhostCommands.USAGE, shell.refusal("kp:vhost --socket /tmp/x.sock"));
        assertEquals("one disk per export; " + VhostCommands.USAGE, shell.refusal("kp:vhost d0 d1 --socket /s"));
        assertEquals("unknown option --sock; " + VhostCommands.USAGE, shell.refusal("kp:vhost d0 --sock /s"));
        assertEquals("--queues two is not a number; " + VhostCommands.USAGE,
                shell.refusal("kp:vhost d0 --socket /s --queues two"));
        assertEquals("--socket is given twice", shell.refusal("kp:vhost d0 --socket /s --socket=/t"));
        assertEquals("usage: kp:vhost-list [--json]", shell.refusal("kp:vhost-list d0"));
        assertEquals("usage: kp:vhost-stop [--json] <disk>", shell.refusal("kp:vhost-stop"));
        assertEquals("usage: kp:vhost-stop [--json] <disk>", shell.refusal("kp:vhost-stop --json a b"));
    }
}
