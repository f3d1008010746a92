package io.kickplug.shell;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.notify.QueueCounters;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.jar.Attributes;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;
import org.junit.jupiter.api.Test;

/** What the plugin commands print, why a strategy is not bound, and the checks of a jar before it is installed. */
class PluginTextTest {

    private static final Provided COALESCE = new Provided(PluginKind.STRATEGY, "coalesce", "io.example.coalesce",
            "1.0.0", 42, true);

    @Test
    void aDepartureSaysWhichBundleWentAndHowAndIsForgottenWhenTheNameComesBack() {
        Departures d = new Departures();
        assertNull(d.whyText(PluginKind.STRATEGY, "coalesce"));
        d.unregistered(COALESCE, true);
        assertTrue(d.whyText(PluginKind.STRATEGY, "coalesce").startsWith("bundle io.example.coalesce 1.0.0 [42] "
                + "stopped at "), d.whyText(PluginKind.STRATEGY, "coalesce"));
        d.bundleEvent(7, "uninstalled"); // another bundle
        assertTrue(d.whyText(PluginKind.STRATEGY, "coalesce").contains(" stopped at "));
        d.bundleEvent(42, "uninstalled");
        assertTrue(d.whyText(PluginKind.STRATEGY, "coalesce").contains("[42] uninstalled at "));
        assertNull(d.whyText(PluginKind.FILTER, "coalesce"), "a filter of the same name is another thing");
        d.registered(new Provided(PluginKind.STRATEGY, "coalesce", "io.example.coalesce", "1.1.0", 43, true));
        assertNull(d.whyText(PluginKind.STRATEGY, "coalesce"));
    }

    @Test
    void statsAndNotifySayWhyAQueueUsesImmediate() {
        QueueCounters q = new QueueCounters("d0", 0, "immediate", "coalesce", 10, 40960, 1, 9, 10, 0, 10,
                List.of(10L, 0L, 0L, 0L, 0L, 0L, 0L, 0L, 0L), 0, 2, 0, 0, 0);
        String why = "bundle io.example.coalesce 1.0.0 [42] uninstalled at 07:00:00";
        assertEquals("d0 queue 0: immediate (configured 'coalesce' is not bound: " + why
                + "; using immediate until it is)", NotifyText.switched(List.of(q), n -> why));
        assertTrue(NotifyText.stats("d0", List.of(q), n -> why).contains("(configured coalesce, not bound: " + why
                + "; using immediate)"));
        assertTrue(NotifyText.statsJson("d0", List.of(q), List.of(), n -> why).contains("\"not_bound_why\": \""
                + why + "\""));
        assertTrue(NotifyText.stats("d0", List.of(q)).contains("(configured coalesce, not bound; using immediate)"));
    }

    @Test
    void strategiesNameTheirBundleWhenKnown() {
        String text = NotifyText.strategies(List.of("bh", "coalesce", "immediate"), List.of(),
                Map.of("bh", "io.kickplug.batching 0.1.0 [9]", "coalesce", COALESCE.bundleText() + " plugin"));
        assertTrue(text.startsWith("strategy   bound     bundle"), text);
        assertTrue(text.contains("\ncoalesce   yes       io.example.coalesce 1.0.0 [42] plugin  -"), text);
        assertTrue(text.contains("\nimmediate  built-in  io.kickplug.blk"), text);
    }

    @Test
    void installedAndProviderListings() {
        Plugins.Installed in = new Plugins.Installed("io.example.coalesce", "1.0.0", 42, "/tmp/c.jar", false, true,
                List.of(COALESCE));
        assertEquals("installed io.example.coalesce 1.0.0 [42] from /tmp/c.jar\n  kept for the next start (--state)\n"
                + "  strategy coalesce", PluginText.installed(in));
        assertEquals("{\"bundle\":\"io.example.coalesce\",\"version\":\"1.0.0\",\"id\":42,\"source\":\"/tmp/c.jar\","
                + "\"updated\":false,\"kept\":true,\"registered\":[{\"kind\":\"strategy\",\"name\":\"coalesce\"}]}",
                JsonOut.write(PluginText.installedJson(in)));
        Provided filter = new Provided(PluginKind.FILTER, "error", "io.example.error", "1.0.0", 43, true);
        assertEquals("filter  bundle                       plugin  disks\nerror   io.example.error 1.0.0 [43]  yes     d0",
                PluginText.providers(PluginKind.FILTER, List.of(filter), Map.of("error", "d0"), "disks"));
        assertEquals("no backends registered", PluginText.providers(PluginKind.BACKEND, List.of(), null, null));
    }

    @Test
    void aJarWithoutABundleSymbolicNameIsRefusedBeforeAnythingIsInstalled() throws Exception {
        Manifest m = new Manifest();
        m.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (JarOutputStream out = new JarOutputStream(bytes, m)) {
            out.flush();
        }
        Manifest read = Plugins.manifest(bytes.toByteArray(), "x.jar");
        String refusal = assertThrows(IllegalArgumentException.class, () -> Plugins.symbolicName(read, "x.jar"))
                .getMessage();
        assertTrue(refusal.contains("no Bundle-SymbolicName"), refusal);
        assertThrows(IllegalArgumentException.class,
                () -> Plugins.manifest("not a jar".getBytes(StandardCharsets.UTF_8), "y.jar"));
        m.getMainAttributes().putValue("Bundle-SymbolicName", "io.example.coalesce;singleton:=true");
        assertEquals("io.example.coalesce", Plugins.symbolicName(m, "z.jar"));
        m.getMainAttributes().putValue("Bundle-SymbolicName", "../evil");
        assertThrows(IllegalArgumentException.class, () -> Plugins.symbolicName(m, "z.jar"));
        String missing = assertThrows(IllegalArgumentException.class, () -> Plugins.read("/nonexistent/p.jar"))
                .getMessage();
        assertTrue(missing.startsWith("cannot read /nonexistent/p.jar"), missing);
    }
}
