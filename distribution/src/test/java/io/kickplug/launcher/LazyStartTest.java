package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class LazyStartTest {

    private static final List<CommandComponents.Command> GUEST = List.of(
            new CommandComponents.Command("fio", "kp", List.of("fio", "guest")),
            new CommandComponents.Command("bench", "kp", List.of("bench")));

    @Test
    void aDaemonBundleWaitsUnlessItsCommandsAreUsed() {
        Set<String> serving = LazyStart.words(List.of("kp:attach --backend null d0 1G",
                "kp:vhost d0 --socket /run/kp/d0.sock --queues 2"));
        assertTrue(LazyStart.later("io.kickplug.guest", GUEST, serving));
        assertTrue(LazyStart.later("org.apache.felix.gogo.shell", List.of(), serving),
                "statements that use none of Gogo's built-ins do not wait for the console bundles");
        assertTrue(LazyStart.later("org.apache.felix.gogo.command", List.of(), serving));
        assertTrue(LazyStart.later("org.apache.felix.gogo.shell", List.of(), Set.of()), "no statements: it waits");
        assertTrue(LazyStart.later("org.apache.felix.metatype", List.of(), serving));
        assertFalse(LazyStart.later("io.kickplug.guest", GUEST, LazyStart.words(List.of("kp:bench seeds"))));
        assertFalse(LazyStart.later("io.kickplug.guest", GUEST, LazyStart.words(List.of("x = (fio d0 job.fio)"))),
                "a bare function name counts too");
    }

    @Test
    void statementsUsingGogoBuiltInsStartTheConsoleBundles() {
        Set<String> echo = LazyStart.words(List.of("kp:attach d0 1G", "echo serving"));
        assertFalse(LazyStart.later("org.apache.felix.gogo.shell", List.of(), echo));
        assertTrue(LazyStart.later("org.apache.felix.gogo.command", List.of(), echo));
        Set<String> each = LazyStart.words(List.of("each [a b] { kp:attach $it 1M }"));
        assertFalse(LazyStart.later("org.apache.felix.gogo.shell", List.of(), each));
        Set<String> lb = LazyStart.words(List.of("felix:lb -s io.kickplug"));
        assertFalse(LazyStart.later("org.apache.felix.gogo.command", List.of(), lb));
        assertFalse(LazyStart.later("org.apache.felix.gogo.shell", List.of(), lb),
                "gogo.shell's converters format what gogo.command returns");
    }

    @Test
    void whatServesExportsNeverWaits() {
        assertFalse(LazyStart.later("io.kickplug.vhost", List.of(), Set.of()));
        assertFalse(LazyStart.later("io.kickplug.blk", List.of(), Set.of()));
        assertFalse(LazyStart.later("org.apache.felix.gogo.runtime", List.of(), Set.of()));
    }
}
