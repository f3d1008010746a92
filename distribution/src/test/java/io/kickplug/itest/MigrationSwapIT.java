package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.kickplug.virtio.testkit.MigratedMemory;
import io.kickplug.virtio.testkit.OutputProcess;
import io.kickplug.virtio.testkit.RealGuestOutput;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.ProcessBuilder.Redirect;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;

/**
 * A live migration while the source's bundles are updated, with real processes: two Kickplug daemons
 * ({@code kickplug.jar --daemon --control SOCK}), each exporting the same image file over vhost-user (the
 * reasoning of {@code LiveMigrationIT}: the destination QEMU connects to its back-end long before the source
 * stops, so it needs an export of its own), and two QEMU 7.2 processes of the real-guest harness (TCG) with
 * {@code reconnect=1}. The guest runs fio randwrite with crc32c verify on /dev/vda pass after pass. For each
 * bundle named in {@code kickplug.migration.swap.bundles} (default {@code io.kickplug.blk,io.kickplug.vhost}),
 * {@code kickplug.migration.swap.rounds} migrations (default 2, alternating between the daemons): the test limits
 * the migration's bandwidth so that it stays in its iterative phase, starts {@code migrate} over QMP, waits until
 * RAM is being sent, runs {@code kp:swap BUNDLE} in the source's daemon through its control socket, and checks the
 * migration is still active when the swap is done (the swap overlapped the iterative phase). Then it lifts the
 * bandwidth limit and waits, bounded, for {@code completed} (the guest goes on at the destination) or
 * {@code failed} (then the guest must go on running at the source). At the end every fio pass of every QEMU exited
 * 0, the guest kernel logged no I/O error, and the md5 of the first 16 MiB the guest reads equals the image's.
 *
 * <p>Not part of the default {@code mvn -B verify} (a few minutes of real guest): run with
 * {@code -Dkickplug.migration.swap=true} (docs/testing.md, docs/real-guest.md "Live migration").
 */
@EnabledIfSystemProperty(named = "kickplug.migration.swap", matches = "true")
class MigrationSwapIT {

    private static final long IMAGE_BYTES = 64L << 20;
    private static final int SUM_MB = 16;
    private static final long STEP_SECONDS = 180;
    /** Bytes per second while the swap runs: keeps the migration in its iterative phase for seconds. */
    private static final long SLOW_BANDWIDTH = 4L << 20;
    private static final int ROUNDS = Integer.getInteger("kickplug.migration.swap.rounds", 2);
    private static final List<String> BUNDLES = Arrays.asList(System.getProperty("kickplug.migration.swap.bundles",
            "io.kickplug.blk,io.kickplug.vhost").split(","));

    private Path jar;
    private RealGuestHarness harness;
    private Path work;
    private Path image;
    private final List<Daemon> daemons = new ArrayList<>();
    private final List<OutputProcess> qemus = new ArrayList<>();
    /** QEMU's view of a stalled guest ({@link #stalledState}), kept with the logs; null without a timeout. */
    private String stall;

    @BeforeEach
    void prepare() throws Exception {
        jar = LauncherJar.built();
        harness = RealGuestHarness.besideJar(jar);
        harness.prepare("migswap-guest");
        // Short paths (sun_path holds 107 bytes); on disk, not tmpfs: the disks use O_DIRECT.
        work = Files.createTempDirectory("kp-migswap");
        image = RealGuestHarness.sparseImage(work.resolve("disk.img"), IMAGE_BYTES);
    }

    @AfterEach
    void cleanUp() throws Exception {
        keepLogs();
        for (OutputProcess q : qemus) {
            RealGuestHarness.stop(q.process);
        }
        for (Daemon d : daemons) {
            RealGuestHarness.stop(d.process);
        }
        RealGuestHarness.deleteTree(work);
    }

    @Test
    void migrationsWhileTheSourcesBundlesAreSwappedLoseNoWrite() throws Exception {
        Daemon a = startDaemon("a");
        Daemon b = startDaemon("b");
        for (Daemon d : List.of(a, b)) {
            awaitTrue(() -> d.logHas("listening on " + d.socket), STEP_SECONDS, "daemon " + d.name + " listens", d);
        }
        Path qmpPath = work.resolve("qmp0.sock");
        OutputProcess source = RealGuestOutput.boot("migswap-src", guestCommand(a, qmpPath, null),
                guestEnv(0)).guest();
        qemus.add(source);
        assertTrue(source.awaitLine("RG-FIO-BEGIN", STEP_SECONDS), () -> "fio did not start:\n" + source.text());
        awaitWrites(a);

        Qmp sourceQmp = Qmp.connect(qmpPath);
        OutputProcess running = source;
        Daemon here = a;
        Daemon there = b;
        List<String> report = new ArrayList<>();
        int i = 0;
        for (String bundle : BUNDLES) {
            for (int round = 1; round <= ROUNDS; round++) {
                i++;
                Path migration = work.resolve("mig" + i + ".sock");
                Path destQmpPath = work.resolve("qmp" + i + ".sock");
                int destConnects = there.count("front-end connected");
                OutputProcess dest = OutputProcess.start("migswap-dst" + i, guestCommand(there, destQmpPath,
                        "unix:" + migration), guestEnv(i));
                qemus.add(dest);
                Daemon to = there;
                awaitTrue(() -> Files.exists(destQmpPath) && Files.exists(migration)
                        && to.count("front-end connected") > destConnects, STEP_SECONDS,
                        "the destination QEMU listens and has connected to daemon " + to.name + ":\n" + dest.text(), to);
                Qmp destQmp = Qmp.connect(destQmpPath);

                sourceQmp.execute("migrate-set-parameters", "{\"max-bandwidth\": " + SLOW_BANDWIDTH
                        + ", \"downtime-limit\": 300}");
                int sourceConnects = here.count("front-end connected");
                long started = System.nanoTime();
                sourceQmp.execute("migrate", "{\"uri\": \"unix:" + migration + "\"}");
                Qmp sq = sourceQmp;
                String[] last = new String[1];
                Daemon from = here;
                awaitTrue(() -> {
                    last[0] = sq.executeUnchecked("query-migrate", null);
                    String transferred = Qmp.field(last[0], "transferred");
                    return "active".equals(Qmp.field(last[0], "status")) && transferred != null
                            && Long.parseLong(transferred) > 0;
                }, STEP_SECONDS, "the migration sends RAM", from);
                // The swap, in the source's daemon, while the migration is in its iterative phase.
                long swapStart = System.nanoTime();
                Control swap = control(here, "kp:swap " + bundle);
                long swapMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - swapStart);
                String during = sourceQmp.executeUnchecked("query-migrate", null);
                String statusAfterSwap = Qmp.field(during, "status");
                // QEMU (reconnect=1) reconnects to the new export while it migrates.
                boolean reconnected = waitFor(() -> from.count("front-end connected") > sourceConnects,
                        STEP_SECONDS, from);
                sourceQmp.execute("migrate-set-parameters", "{\"max-bandwidth\": 1073741824}");
                awaitTrue(() -> {
                    last[0] = sq.executeUnchecked("query-migrate", null);
                    String st = Qmp.field(last[0], "status");
                    return "completed".equals(st) || "failed".equals(st) || "cancelled".equals(st);
                }, STEP_SECONDS, "migration " + i + " ends (completed or failed)", from);
                long wallMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - started);
                String outcome = Qmp.field(last[0], "status");
                String stats = control(here, "kp:stats d0").out().lines().filter(l -> l.contains("dirty log"))
                        .collect(Collectors.joining("; "));
                String line = String.format("migration %d (%s -> %s) with kp:swap %s on the source: %s; total %s ms"
                        + " (wall %d ms), downtime %s ms, dirty-sync-count %s, transferred %s bytes; swap %d ms "
                        + "(exit %d), migration status after the swap %s, QEMU reconnected %s; source %s; swap said: %s",
                        i, here.name, there.name, bundle, outcome, Qmp.field(last[0], "total-time"), wallMillis,
                        Qmp.field(last[0], "downtime"), Qmp.field(last[0], "dirty-sync-count"),
                        Qmp.field(last[0], "transferred"), swapMillis, swap.exit(), statusAfterSwap, reconnected, stats,
                        swap.out().replace('\n', ' '));
                System.out.println("MigrationSwapIT: " + line);
                report.add(line);
                assertEquals(0, swap.exit(), () -> "kp:swap " + bundle + " failed: " + line + "\n" + report(null));
                assertEquals("active", statusAfterSwap, () -> "the swap did not overlap the migration: " + line);
                if ("completed".equals(outcome)) {
                    checkMemory(i, sourceQmp, destQmp, line);
                    destQmp.execute("cont", null);
                    sourceQmp.execute("quit", null);
                    sourceQmp.close();
                    running.finish(60);
                    Qmp dq = destQmp;
                    awaitTrue(() -> "running".equals(Qmp.field(dq.executeUnchecked("query-status", null), "status")),
                            STEP_SECONDS, "the guest runs on the destination", to);
                    awaitWrites(to);
                    running = dest;
                    sourceQmp = destQmp;
                    here = to;
                    there = from;
                } else {
                    // Refused: the error is QEMU's message, and the guest keeps running on the source.
                    String error = Qmp.field(last[0], "error-desc");
                    assertTrue(error != null && !error.isBlank(), () -> "a failed migration says why: " + line);
                    Qmp sq2 = sourceQmp;
                    awaitTrue(() -> "running".equals(Qmp.field(sq2.executeUnchecked("query-status", null),
                            "status")), STEP_SECONDS, "the guest runs on at the source after " + error, from);
                    destQmp.close();
                    RealGuestHarness.stop(dest.process);
                    awaitWrites(from);
                }
            }
        }
        OutputProcess lastRun = running;
        int passesBefore = lastRun.lines("RG-PASS ").size();
        Daemon at = here;
        awaitTrue(() -> lastRun.lines("RG-PASS ").size() > passesBefore, STEP_SECONDS,
                "a whole fio pass after the last migration", at);
        lastRun.say("stop");
        lastRun.finish(STEP_SECONDS);
        sourceQmp.close();

        String text = report(lastRun);
        List<String> passes = new ArrayList<>();
        for (OutputProcess q : qemus) {
            passes.addAll(q.lines("RG-PASS "));
            List<String> errors = q.lines("RG-KERNEL-ERROR");
            errors.addAll(q.lines("RG-ERROR"));
            assertTrue(errors.isEmpty(), () -> "guest errors " + errors + ":\n" + text);
        }
        System.out.println("MigrationSwapIT: fio passes " + passes + "\n" + String.join("\n", report));
        assertTrue(passes.stream().allMatch(l -> l.endsWith("exit=0")), () -> "a fio pass failed (verify):\n" + text);
        RealGuestHarness.assertVerifiedRun(lastRun, image, SUM_MB, text);
    }

    /** Keeps the daemons' logs and every QEMU's console in target/migration-swap/RUN (the work folder goes). */
    private void keepLogs() {
        if (work == null || jar == null) {
            return;
        }
        try {
            Path dir = jar.getParent().resolve("migration-swap").resolve(java.time.LocalDateTime.now().toString()
                    .replace(':', '-'));
            Files.createDirectories(dir);
            for (Daemon d : daemons) {
                if (Files.exists(d.log())) {
                    Files.copy(d.log(), dir.resolve(d.log().getFileName()));
                }
            }
            for (int i = 0; i < qemus.size(); i++) {
                Files.writeString(dir.resolve("qemu" + i + ".log"), qemus.get(i).text());
            }
            if (stall != null) {
                Files.writeString(dir.resolve("stall.txt"), stall);
            }
        } catch (IOException | RuntimeException e) {
            System.err.println("MigrationSwapIT: logs not kept: " + e);
        }
    }

    /**
     * Compares the guest memory of the paused source with the destination's, which has not run yet
     * ({@link MigratedMemory}): they must be equal. A page that differs was lost by the migration, by QEMU's own
     * dirty tracking of the guest's CPUs (TCG on a busy host, docs/real-guest.md) or by a back-end's dirty log; this
     * test cannot tell which (LiveMigrationIT can), so it fails here with the pages, instead of waiting for the
     * guest to crash or stall on the destination.
     */
    private void checkMemory(int i, Qmp source, Qmp dest, String migration) throws IOException {
        Path a = work.resolve("memory-source.bin");
        Path b = work.resolve("memory-destination.bin");
        MigratedMemory.Result r;
        try {
            source.execute("pmemsave", MigratedMemory.pmemsave(512L << 20, a));
            dest.execute("pmemsave", MigratedMemory.pmemsave(512L << 20, b));
            r = MigratedMemory.compare(a, b, null);
        } finally {
            Files.deleteIfExists(a);
            Files.deleteIfExists(b);
        }
        System.out.println("MigrationSwapIT: migration " + i + ": " + r);
        assertTrue(r.same(), () -> "migration " + i + " lost guest memory: " + r + "; " + migration + "\n"
                + report(null));
    }

    private List<String> guestCommand(Daemon d, Path qmp, String incoming) {
        List<String> more = new ArrayList<>(List.of("--reconnect", "1", "--passes", "100000", "--mem", "512M",
                "--qmp", qmp.toString()));
        if (incoming != null) {
            // Paused (-S) until the two ends' memory is compared (checkMemory).
            more.addAll(List.of("--incoming", incoming, "--paused"));
        }
        return harness.crashVerifyRun(d.socket, SUM_MB, more.toArray(String[]::new));
    }

    /** Waits until the guest writes through daemon {@code d}: the image is modified after this call. */
    private void awaitWrites(Daemon d) throws IOException {
        long since = Files.getLastModifiedTime(image).toMillis();
        long now = System.currentTimeMillis();
        awaitTrue(() -> {
            try {
                return Files.getLastModifiedTime(image).toMillis() > Math.max(since, now);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }, STEP_SECONDS, "the guest writes through daemon " + d.name, d);
    }

    private Daemon startDaemon(String name) throws IOException {
        Path dir = Files.createDirectories(work.resolve(name));
        Path socket = work.resolve(name + ".sock");
        Path script = Files.writeString(dir.resolve("serve.gosh"), String.join("\n",
                "kp:attach --queues 2 --backend file --file " + image + " --direct d0",
                "kp:vhost d0 --socket " + socket + " --queues 2", ""));
        Path log = work.resolve("daemon-" + name + ".log");
        List<String> command = LauncherJar.command(jar, dir);
        command.addAll(List.of("--daemon", "--verbose", "--control", work.resolve(name + "-ctl.sock").toString(),
                "-f", script.toString()));
        String level = System.getProperty("kickplug.migration.swap.log.level");
        if (level != null && !level.isBlank()) {
            // debug: every vhost-user message and reply, each ring's start and stop with its indices
            command.addAll(command.size() - 2, List.of("--log-level", level));
        }
        Process p = new ProcessBuilder(command).directory(dir.toFile()).redirectInput(Redirect.from(
                new java.io.File("/dev/null"))).redirectOutput(log.toFile()).redirectErrorStream(true).start();
        Daemon d = new Daemon(name, p, log, socket, work.resolve(name + "-ctl.sock"));
        daemons.add(d);
        return d;
    }

    private record Control(int exit, String out) {
    }

    /** Runs one statement in daemon {@code d} through its control socket; bounded. */
    private Control control(Daemon d, String statement) throws Exception {
        List<String> command = new ArrayList<>(LauncherJar.command(jar, work));
        command.addAll(List.of("--connect", d.control.toString(), "--wait", "60", "-c", statement));
        Process p = new ProcessBuilder(command).directory(work.toFile()).redirectErrorStream(true)
                .redirectInput(Redirect.from(new java.io.File("/dev/null"))).start();
        StringBuilder out = new StringBuilder();
        Thread reader = new Thread(() -> {
            try {
                out.append(new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                out.append(e);
            }
        });
        reader.start();
        if (!p.waitFor(STEP_SECONDS, TimeUnit.SECONDS)) {
            RealGuestHarness.stop(p);
            fail(statement + " did not finish in " + STEP_SECONDS + " s");
        }
        reader.join(10_000);
        return new Control(p.exitValue(), out.toString().trim());
    }

    private String report(OutputProcess guest) {
        StringBuilder b = new StringBuilder();
        for (OutputProcess q : qemus) {
            b.append("--- QEMU\n").append(q.text()).append('\n');
        }
        for (Daemon d : daemons) {
            b.append("--- daemon ").append(d.name).append(" (relevant lines)\n").append(d.relevantLog()).append('\n');
        }
        return b.toString();
    }

    private void awaitTrue(BooleanSupplier condition, long seconds, String what, Daemon d) {
        if (!waitFor(condition, seconds, d)) {
            stall = stalledState();
            fail("timed out after " + seconds + " s waiting until " + what + "\n" + report(null) + stall);
        }
    }

    private Path monitor(int qemu) {
        return work.resolve("mon" + qemu + ".sock");
    }

    /**
     * The harness's environment for QEMU {@code qemu}: its monitor socket, and nokaslr (see {@link #cpuState}) plus
     * the kernel parameters of {@code kickplug.migration.swap.append} (e.g. {@code ignore_loglevel}: every kernel
     * message on the console, warnings with their stacks included).
     */
    private java.util.Map<String, String> guestEnv(int qemu) {
        String more = System.getProperty("kickplug.migration.swap.append", "").trim();
        return java.util.Map.of("RG_MONITOR", monitor(qemu).toString(), "RG_APPEND",
                "nokaslr" + (more.isEmpty() ? "" : " " + more));
    }

    /** QEMU's view of each virtqueue and vhost queue of every QEMU still running (its monitor); never throws. */
    private String stalledState() {
        StringBuilder b = new StringBuilder("--- state at the timeout\n");
        for (int q = 0; q < qemus.size(); q++) {
            if (!qemus.get(q).process.isAlive()) {
                continue;
            }
            try {
                b.append("QEMU ").append(q).append('\n').append(HumanMonitor.virtqueues(monitor(q), 2));
                b.append(cpuState(monitor(q)));
            } catch (Exception e) {
                b.append("(QEMU ").append(q).append(" monitor: ").append(e).append(")\n");
            }
        }
        return b.toString();
    }

    /**
     * Where each vCPU is: its instruction pointer and flags three times 300 ms apart (a vCPU that spins shows the
     * same function each time; {@code HLT=1} is an idle one), then its registers, the instructions at its
     * instruction pointer and the top of its stack, with every kernel text address named from the harness's
     * System.map (the guests boot with nokaslr). A soft lockup report names only the task; this names the function
     * and its callers. Never throws.
     */
    private String cpuState(Path monitor) {
        StringBuilder b = new StringBuilder();
        try {
            List<String> cpus = new ArrayList<>();
            Matcher c = Pattern.compile("CPU #(\\d+)").matcher(HumanMonitor.command(monitor, "info cpus"));
            while (c.find()) {
                cpus.add(c.group(1));
            }
            for (int i = 0; i < 3; i++) {
                for (String cpu : cpus) {
                    // One connection: "cpu N" selects the vCPU the next commands read.
                    b.append("sample ").append(i).append(", CPU ").append(cpu).append(": ")
                            .append(HumanMonitor.command(monitor, "cpu " + cpu, "info registers").lines()
                                    .filter(l -> l.startsWith("RIP") || l.startsWith("EFL"))
                                    .collect(Collectors.joining(" | "))).append('\n');
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(300)); // spacing of samples, not a wait
            }
            for (String cpu : cpus) {
                String regs = HumanMonitor.command(monitor, "cpu " + cpu, "info registers", "x/8i $pc", "x/96gx $sp");
                b.append(regs.lines().filter(l -> !l.startsWith("ES ") && !l.startsWith("CS ")
                        && !l.startsWith("SS ") && !l.startsWith("DS ") && !l.startsWith("FS ")
                        && !l.startsWith("GS ") && !l.startsWith("FPR") && !l.startsWith("XMM")
                        && !l.startsWith("YMM")).collect(Collectors.joining("\n", "", "\n")));
            }
        } catch (Exception e) {
            b.append("(monitor: ").append(e).append(")\n");
        }
        return KernelSymbols.annotate(b.toString(), harness.cache().resolve("System.map"));
    }

    private boolean waitFor(BooleanSupplier condition, long seconds, Daemon d) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() > deadline) {
                return false;
            }
            if (!d.process.isAlive()) {
                fail("daemon " + d.name + " ended (status " + d.process.exitValue() + ")\n" + report(null));
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
        return true;
    }

    /** One daemon JVM; its output goes to a file. */
    private record Daemon(String name, Process process, Path log, Path socket, Path control) {
        String logText() {
            try {
                return Files.readString(log, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return "";
            }
        }

        boolean logHas(String text) {
            return logText().contains(text);
        }

        int count(String text) {
            String t = logText();
            int n = 0;
            for (int i = t.indexOf(text); i >= 0; i = t.indexOf(text, i + 1)) {
                n++;
            }
            return n;
        }

        String relevantLog() {
            return logText().lines().filter(l -> l.contains("vhost-user") || l.contains("error")
                    || l.contains("Exception") || l.contains("log")).collect(Collectors.joining("\n"));
        }
    }

    /**
     * A small QMP client (QEMU's docs/interop/qmp-spec.rst): the greeting, {@code qmp_capabilities}, then one
     * command at a time, events skipped. Values are picked out of an answer's text with {@link #field}.
     */
    private static final class Qmp implements AutoCloseable {
        private final SocketChannel channel;
        private final BufferedReader in;

        private Qmp(SocketChannel channel) throws IOException {
            this.channel = channel;
            this.in = new BufferedReader(new InputStreamReader(Channels.newInputStream(channel),
                    StandardCharsets.UTF_8));
            String greeting = in.readLine();
            if (greeting == null || !greeting.contains("\"QMP\"")) {
                throw new IOException("no QMP greeting: " + greeting);
            }
            execute("qmp_capabilities", null);
        }

        static Qmp connect(Path socket) throws IOException {
            SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX);
            try {
                ch.connect(UnixDomainSocketAddress.of(socket));
                return new Qmp(ch);
            } catch (IOException e) {
                ch.close();
                throw e;
            }
        }

        String execute(String command, String arguments) throws IOException {
            String line = "{\"execute\": \"" + command + "\"" + (arguments == null ? "" : ", \"arguments\": "
                    + arguments) + "}\n";
            ByteBuffer b = ByteBuffer.wrap(line.getBytes(StandardCharsets.UTF_8));
            while (b.hasRemaining()) {
                channel.write(b);
            }
            while (true) {
                String answer = in.readLine();
                if (answer == null) {
                    throw new IOException("QMP closed while waiting for the answer to " + command);
                }
                if (answer.contains("\"event\"")) {
                    continue;
                }
                if (answer.contains("\"error\"")) {
                    throw new IOException(command + " failed: " + answer);
                }
                return answer;
            }
        }

        String executeUnchecked(String command, String arguments) {
            try {
                return execute(command, arguments);
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }

        static String field(String json, String key) {
            Matcher m = Pattern.compile("\"" + Pattern.quote(key) + "\": *(\"([^\"]*)\"|(-?[0-9]+))").matcher(json);
            if (!m.find()) {
                return null;
            }
            return m.group(2) != null ? m.group(2) : m.group(3);
        }

        @Override
        public void close() throws IOException {
            channel.close();
        }
    }
}
