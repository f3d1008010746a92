package io.kickplug.itest;

import static org.junit.Assert.assertEquals;
import static org.junit.Assert.assertTrue;
import static org.junit.Assert.fail;
import static org.ops4j.pax.exam.CoreOptions.systemProperty;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.DeviceRecoveries;
import io.kickplug.api.guest.DeviceRecovery;
import io.kickplug.api.transport.TransportKind;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.lang.reflect.Method;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.After;
import org.junit.Before;
import org.junit.Test;
import org.junit.runner.RunWith;
import org.ops4j.pax.exam.Option;
import org.ops4j.pax.exam.junit.PaxExam;
import org.ops4j.pax.exam.spi.reactors.ExamReactorStrategy;
import org.ops4j.pax.exam.spi.reactors.PerClass;
import org.osgi.framework.Bundle;
import org.osgi.framework.ServiceReference;

/**
 * Issue 19's acceptance "the NBD and throttle bundles can be stopped and started while disks use them": the
 * simulated guest runs fio randwrite with crc32c verify on an NBD disk (qemu-nbd on a raw file, started here) and
 * on a throttled memory disk (500 IOPS) while the backend-nbd and throttle bundles are stopped, started and
 * updated {@value #ROUNDS_DEFAULT} times each ({@code kickplug.remote.rounds}). The NBD disk holds its requests
 * while its bundle is away and reconnects to the same URI when it is back; the throttled disk runs unthrottled
 * while the throttle bundle is away and is throttled again, with the limit it had (kept in its configuration),
 * when it is back. Neither disk is reset (the guest has no recovery to do); every fio pass completes exactly the
 * I/Os it submitted and verifies.
 */
@RunWith(PaxExam.class)
@ExamReactorStrategy(PerClass.class)
public class RemoteBundlesSwapIT extends DistributionExam {

    private static final int ROUNDS_DEFAULT = 3;
    private static final int ROUNDS = Integer.getInteger("kickplug.remote.rounds", ROUNDS_DEFAULT);
    private static final String NBD_BUNDLE = "io.kickplug.backend.nbd";
    private static final String THROTTLE_BUNDLE = "io.kickplug.throttle";
    private static final Pattern DELAYED = Pattern.compile("delayed (\\d+) requests");
    private static final long WAIT_SECONDS = 30;

    private Path dir;
    private Process qemuNbd;

    @Override
    protected Option[] extraOptions() {
        return new Option[] {systemProperty("kickplug.remote.rounds").value(String.valueOf(ROUNDS))};
    }

    @Before
    public void startServer() throws Exception {
        dir = Files.createTempDirectory("kp-remote-swap");
        Path image = dir.resolve("disk.raw");
        try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
            f.setLength(16L << 20);
        }
        Path socket = dir.resolve("qn.sock");
        qemuNbd = new ProcessBuilder("qemu-nbd", "-t", "-e", "8", "-f", "raw", "--cache=writeback", "-k",
                socket.toString(), "-x", "disk", image.toString()).redirectErrorStream(true)
                .redirectOutput(dir.resolve("qemu-nbd.log").toFile()).start();
        Conditions.await(() -> Files.exists(socket) || !qemuNbd.isAlive(), "qemu-nbd to listen on " + socket,
                WAIT_SECONDS);
        assertTrue("qemu-nbd runs", qemuNbd.isAlive());
    }

    @After
    public void stopServer() throws IOException {
        if (qemuNbd != null) {
            qemuNbd.destroyForcibly();
        }
        try (var files = Files.walk(dir)) {
            files.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
        }
    }

    @Test
    public void nbdAndThrottleBundlesStoppedStartedAndUpdatedUnderFioVerify() throws Exception {
        String uri = "nbd+unix:///disk?socket=" + dir.resolve("qn.sock");
        disks.attach(new DiskSpec("nb", new BackendSpec("nbd", uri, 0, false), TransportKind.MMIO, 2,
                DiskSpec.DEFAULT_QUEUE_SIZE, 1, null, DiskSpec.DEFAULT_GUEST_MEMORY));
        disks.attach(FioLoad.memoryDisk("tt", TransportKind.PCI));
        String limits = throttle("tt", "--iops", "500");
        assertTrue(limits, limits.contains("iops-total=500"));
        long start = System.nanoTime();
        FioLoad load = new FioLoad(context, List.of("nb", "tt"));
        awaitDelayed("before any restart");
        for (int round = 0; round < ROUNDS; round++) {
            String where = "round " + round;
            Bundle nbd = bundle(NBD_BUNDLE);
            nbd.stop(); // returns once the backend completed the requests in flight and closed
            // Those completions reach the disk's I/O threads as posted tasks, and a request counts as completed
            // when its I/O thread pushes it: up to the requests in flight now may still be counted after stop()
            // returned (flake hunt 8 run 3: expected 39 but was 40). Held requests are never counted. In flight
            // first: read after it, the completed count leaves at most that many still to come.
            long pending = disks.info("nb").requestsInFlight();
            long completed = disks.info("nb").requestsCompleted();
            Conditions.await(() -> disks.info("nb").requestsInFlight() > 0,
                    "guest requests arriving while the NBD bundle is away", WAIT_SECONDS);
            pause();
            long late = disks.info("nb").requestsCompleted() - completed;
            assertTrue(where + ": nothing completes while the NBD bundle is away (held, not failed): " + late
                    + " completed, " + pending + " were in flight when it stopped", late <= pending);
            load.assertRunning(where + ", NBD bundle stopped");
            nbd.start();
            pause();
            bundle(NBD_BUNDLE).update();
            assertEquals(Bundle.ACTIVE, bundle(NBD_BUNDLE).getState());
            load.assertRunning(where + ", NBD bundle back");

            Bundle throttle = bundle(THROTTLE_BUNDLE);
            throttle.stop();
            pause(); // the throttled disk runs unthrottled meanwhile
            load.assertRunning(where + ", throttle bundle stopped");
            (round % 2 == 0 ? throttle : bundle(THROTTLE_BUNDLE)).start();
            if (round % 2 == 1) {
                bundle(THROTTLE_BUNDLE).update();
            }
            String back = throttle("tt");
            assertTrue(where + ": the limit is back from the disk's configuration: " + back,
                    back.contains("iops-total=500"));
            awaitDelayed(where + ", throttle bundle back");
            load.assertRunning(where + ", throttle bundle back");
        }
        load.finishAndCheck();
        List<DeviceRecovery> recoveries = InstalledBundles.service(context, DeviceRecoveries.class).since(start);
        assertTrue("no device was reset (the guest recovered nothing): " + recoveries, recoveries.isEmpty());
        System.out.printf("RemoteBundlesSwapIT: %d rounds of NBD and throttle bundle stop/start/update, %d fio passes, "
                + "no device reset%n", ROUNDS, load.outputs.size());
        for (String disk : List.of("nb", "tt")) {
            DiskInfo info = disks.info(disk);
            assertEquals(0, info.requestsInFlight());
            disks.detach(disk);
        }
    }

    /** The throttle is in force: its counter of delayed requests grows while fio runs. */
    private void awaitDelayed(String where) throws Exception {
        long before = delayed(throttle("tt"));
        Conditions.await(() -> {
            try {
                return delayed(throttle("tt")) > before;
            } catch (Exception e) {
                return false;
            }
        }, "requests delayed by the throttle (" + where + ")", WAIT_SECONDS);
    }

    private static long delayed(String describe) {
        Matcher m = DELAYED.matcher(describe);
        return m.find() ? Long.parseLong(m.group(1)) : 0;
    }

    private static void pause() {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300));
    }

    /** kp:throttle DISK ARGS... (the throttle bundle's command; waits for it after a restart). */
    private String throttle(String disk, String... args) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            ServiceReference<?>[] found = context.getServiceReferences((String) null,
                    "(&(osgi.command.scope=kp)(osgi.command.function=throttle))");
            if (found != null) {
                Object cmd = context.getService(found[0]);
                if (cmd != null) {
                    Method m = cmd.getClass().getMethod("throttle", String.class, String[].class);
                    return (String) m.invoke(cmd, disk, args);
                }
            }
            if (System.nanoTime() - deadline > 0) {
                fail("no kp:throttle command within 20 s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
        }
    }

    private Bundle bundle(String symbolicName) {
        return InstalledBundles.named(context, symbolicName);
    }
}
