package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import static io.kickplug.itest.StateDaemon.ok;

import io.kickplug.launcher.ControlClient;
import io.kickplug.itest.plugin.EndOfBatchStrategy;
import io.kickplug.virtio.testkit.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A plugin from outside the distribution, in a daemon ({@code --daemon --control SOCK --state DIR}) driven over its
 * control socket: a strategy bundle built with bnd ({@link PluginJar}) is installed with {@code kp:install}, a disk
 * switches to it while fio writes and verifies, the plugin is uninstalled under that I/O (the disk falls back to
 * {@code immediate}, kp:stats says why, the fio pass verifies and completes exactly the I/Os it submitted),
 * installed again (the disk's configured strategy applies again), compared with the built-in strategies by
 * {@code kp:compare} (text, JSON and HTML), and found again after a restart with the same state folder.
 */
class PluginIT {

    /** Two jobs of 1024 4k writes each, then their verify reads; throttled so that the pass lasts seconds. */
    private static final String FIO = "kp:fio d0 --rw=randwrite --bs=4k --size=4m --ioengine=libaio --iodepth=32 "
            + "--verify=crc32c --name=a --offset=0 --name=b --offset=8m --output-format=json";
    private static final Pattern TOTAL_IOS = Pattern.compile("\"total_ios\"\\s*:\\s*(\\d+)");
    private static final Pattern REQUESTS = Pattern.compile("\"requests\": (\\d+)");

    private Path work;
    private StateDaemon daemon;

    @AfterEach
    void stopDaemon() throws Exception {
        StateDaemon.stopAndDelete(daemon, work);
    }

    @Test
    void aPluginStrategyIsInstalledUsedUnderVerifyIOComparedUninstalledAndKeptAcrossARestart() throws Exception {
        work = Files.createTempDirectory(Path.of("/tmp"), "kp-pl"); // short: sun_path holds 107 bytes
        daemon = new StateDaemon(work);
        Path control = work.resolve("ctl.sock");
        Path plugin = PluginJar.build(work.resolve("end-of-batch.jar"), "1.0.0");
        String name = EndOfBatchStrategy.NAME;
        daemon.start(control);
        try (ControlClient c = new ControlClient(control)) {
            ok(c, "kp:attach --queues 2 d0 16M");
            String installed = ok(c, "kp:install " + plugin);
            assertTrue(installed.contains("installed " + PluginJar.SYMBOLIC_NAME + " 1.0.0")
                    && installed.contains("strategy " + name) && installed.contains("kept for the next start"),
                    installed);
            assertTrue(Files.isRegularFile(work.resolve("state/plugins/" + PluginJar.SYMBOLIC_NAME + ".jar")));
            String strategies = ok(c, "kp:strategies");
            assertTrue(strategies.contains(name) && strategies.contains(PluginJar.SYMBOLIC_NAME + " 1.0.0"),
                    strategies);
            String plugins = ok(c, "kp:plugins");
            assertTrue(plugins.contains(PluginJar.SYMBOLIC_NAME) && plugins.contains("strategy " + name), plugins);
            assertTrue(ok(c, "kp:backends").contains("memory"), "the built-in backends are listed");
            assertTrue(ok(c, "kp:filters").contains("throttle"), "the throttle filter is listed");
            // The distribution's bundles are not plugins: kp:uninstall leaves them alone.
            String refused = c.ask("kp:uninstall io.kickplug.batching");
            assertTrue(refused.startsWith("{\"ok\":false") && refused.contains("not a plugin"), refused);

            // Under verify I/O: switch to the plugin, then uninstall it.
            ok(c, "kp:throttle d0 --iops 1500");
            CompletableFuture<String> pass = CompletableFuture.supplyAsync(() -> {
                try (ControlClient f = new ControlClient(control)) {
                    return f.ask(FIO);
                } catch (IOException e) {
                    throw new AssertionError(e);
                }
            });
            awaitRequests(c, 300);
            String switched = ok(c, "kp:notify d0 " + name);
            assertTrue(switched.contains("queue 0: " + name) && switched.contains("queue 1: " + name), switched);
            long at = requests(c);
            awaitRequests(c, at + 300);
            assertFalse(pass.isDone(), "the pass still runs when the plugin goes");
            String gone = ok(c, "kp:uninstall " + PluginJar.SYMBOLIC_NAME);
            assertTrue(gone.contains("uninstalled " + PluginJar.SYMBOLIC_NAME) && gone.contains(name + " gone"), gone);
            String stats = ok(c, "kp:stats d0");
            assertTrue(stats.contains("(configured " + name + ", not bound: bundle " + PluginJar.SYMBOLIC_NAME
                    + " 1.0.0") && stats.contains("uninstalled at") && stats.contains("using immediate"), stats);
            String notify = ok(c, "kp:notify d0 " + name);
            assertTrue(notify.contains("is not bound: bundle " + PluginJar.SYMBOLIC_NAME), notify);
            String answer = pass.get(180, TimeUnit.SECONDS);
            assertTrue(answer.startsWith("{\"ok\":true"), answer);
            List<Long> ios = new ArrayList<>();
            Matcher m = TOTAL_IOS.matcher(answer);
            while (m.find()) {
                ios.add(Long.parseLong(m.group(1)));
            }
            // Per job: read, write, trim. Every write read back and verified, none lost, none twice.
            assertEquals(List.of(1024L, 1024L, 0L, 1024L, 1024L, 0L), ios, answer);
            assertFalse(Files.exists(work.resolve("state/plugins/" + PluginJar.SYMBOLIC_NAME + ".jar")));

            // Back: the disk's configured strategy applies again.
            ok(c, "kp:throttle d0 --clear");
            ok(c, "kp:install " + plugin);
            Await.await(() -> c.tryAsk("kp:stats --json d0").contains("\"strategy\": \"" + name + "\""),
                    Duration.ofSeconds(10), "the disk uses " + name + " again");

            // Compared with the built-in strategies.
            Path html = work.resolve("compare.html");
            Path json = work.resolve("compare.json");
            String compared = ok(c, "kp:compare d0 --strategies immediate,bh," + name + " --job 'rw=randread bs=4k "
                    + "iodepth=32 runtime=300ms' --rounds 2 --json " + json + " --html " + html);
            for (String s : List.of("immediate", "bh", name)) {
                assertTrue(compared.contains("\\n" + s + " "), compared);
            }
            assertTrue(Files.readString(html).contains("<svg"), "the page has charts");
            String j = Files.readString(json);
            assertTrue(j.contains("\"samples\":[") && j.contains("\"strategy\":\"" + name + "\",\"round\":2"), j);
            String after = ok(c, "kp:stats --json d0");
            assertTrue(after.contains("\"configured\": \"" + name + "\""), "kp:compare put the disk's own back");
        }
        daemon.stopGracefully();

        // A restart with the same state folder: the plugin is installed and started again, the disk uses it.
        daemon.start(control);
        try (ControlClient c = new ControlClient(control)) {
            String plugins = ok(c, "kp:plugins");
            assertTrue(plugins.contains(PluginJar.SYMBOLIC_NAME), plugins + daemon.log());
            Await.await(() -> c.tryAsk("kp:stats --json d0").contains("\"strategy\": \"" + name + "\""),
                    Duration.ofSeconds(10), "the disk uses " + name + " after the restart");
            // An update of the shell bundle (the plugin commands' own) leaves the plugin installed and in use.
            ok(c, "felix:update io.kickplug.shell");
            Await.await(() -> c.tryAsk("kp:plugins").contains(PluginJar.SYMBOLIC_NAME), Duration.ofSeconds(10),
                    "kp:plugins after the shell's update");
            assertTrue(ok(c, "kp:stats --json d0").contains("\"strategy\": \"" + name + "\""));
            ok(c, "kp:uninstall " + PluginJar.SYMBOLIC_NAME);
        }
        daemon.stopGracefully();
        daemon.start(control);
        try (ControlClient c = new ControlClient(control)) {
            assertTrue(ok(c, "kp:plugins").contains("no plugins installed"), "uninstalled for good");
        }
    }

    private static long requests(ControlClient c) throws IOException {
        Matcher m = REQUESTS.matcher(ok(c, "kp:stats --json d0"));
        long sum = 0;
        while (m.find()) {
            sum += Long.parseLong(m.group(1));
        }
        return sum;
    }

    private static void awaitRequests(ControlClient c, long n) {
        Await.await(() -> {
            try {
                return requests(c) >= n;
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }, Duration.ofSeconds(60), n + " requests on d0");
    }
}
