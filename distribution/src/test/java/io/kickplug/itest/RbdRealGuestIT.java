package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.kickplug.qmp.Json;
import io.kickplug.qmp.testkit.QmpClient;
import io.kickplug.rbd.MicroCeph;
import io.kickplug.virtio.testkit.MigratedMemory;
import io.kickplug.virtio.testkit.OutputProcess;
import io.kickplug.virtio.testkit.RealGuestOutput;
import java.io.File;
import java.io.IOException;
import java.lang.ProcessBuilder.Redirect;
import java.net.UnixDomainSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.Channels;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Issue 47's real-guest acceptance: a Linux guest (the vhost-user module's real-guest harness, QEMU 7.2, TCG here) on
 * an RBD image of the test cluster ({@link MicroCeph}), served by two Kickplug daemons ({@code kickplug.jar --daemon
 * --control SOCK}, {@code kp:attach --backend rbd}, {@code kp:vhost}, two queues) as two hosts would serve it. One
 * boot, in the harness's step mode (the guest runs one step per line the test writes to its console):
 * <ol>
 * <li>fio randwrite with crc32c verify on two queues over the first 16 MiB, then the same job with
 * {@code verify_only}, then the md5 of what the guest reads equals that of {@code rbd export};</li>
 * <li>{@code kp:resize} on daemon A grows the image from 64 to 96 MiB while the guest watches
 * {@code /sys/block/vda/size}: the guest sees the new size and its kernel logs the capacity change, and
 * {@code rbd info} has the new size;</li>
 * <li>daemon B attaches the image and exports it; a second QEMU starts with {@code -incoming} on B's export; the guest
 * runs fio randwrite with crc32c verify on a region of the grown part pass after pass, the test waits until daemon A
 * serves its writes and migrates it over QMP ({@code migrate}, {@code query-migrate} until {@code completed}); the
 * source QEMU quits and the guest runs on at B. librbd's exclusive lock is watched with {@code rbd lock ls}: once B
 * holds it (only a write takes it) and a pass (the one the move interrupted) has ended on B, the guest stops after
 * one more pass, all of it on B. Every pass must verify what it wrote before, during and after the move. Then
 * {@code verify_only} of every region on B. With {@code kickplug.rbd.guest.migrations=N} (default 1) the guest moves
 * N times, back and forth;</li>
 * <li>the daemon the guest left last detaches the disk, and on the other one the guest runs {@code verify_only} of
 * every region and reads the whole disk, whose md5 equals that of {@code rbd export}.</li>
 * </ol>
 * No guest step may fail, the guest kernel may log no I/O or virtio error, and the daemons no librbd error. Each step
 * prints its time and the load average, each migration QEMU's {@code total-time}, {@code downtime} and
 * {@code dirty-sync-count}, the pages the source's dirty log marked ({@code kp:stats --json}: {@code dirty_log}) and
 * who held the lock when. A wait that times out ({@value #STEP_SECONDS} s: a guest step, a migration) fails the test
 * with each QEMU's {@code info virtio-queue-status} and {@code info virtio-vhost-queue-status} and each daemon's
 * {@code kp:stats --json} and {@code kp:vhost-list --json}. The daemons' logs and the QEMUs' consoles are kept in
 * {@code distribution/target/rbd-real-guest/<time>/}.
 */
@ExtendWith(MicroCeph.class)
class RbdRealGuestIT {

    private static final long IMAGE_BYTES = 64L << 20;
    private static final long GROWN_BYTES = 96L << 20;
    private static final int SUM_MB = 16;
    private static final long STEP_SECONDS = 180;
    private static final int MIGRATIONS = Integer.getInteger("kickplug.rbd.guest.migrations", 1);
    /** The 16 MiB regions (offsets in MiB) the guest writes during migration i: the grown part first. */
    private static final int[] REGION_MB = {64, 80, 16, 32, 48};

    private Path jar;
    private RealGuestHarness harness;
    private Path work;
    private MicroCeph ceph;
    private String image;
    private final List<Daemon> daemons = new ArrayList<>();
    private final List<Guest> qemus = new ArrayList<>();
    /** The QEMU the guest runs on now. */
    private Guest current;
    /** The QEMU that must not end while the test waits (null while one quits or the guest powers off). */
    private volatile Guest running;
    /** The daemons' log level: info, or debug for every vhost-user message and each ring's start and stop. */
    private static final String LOG_LEVEL = System.getProperty("kickplug.rbd.guest.log.level", "info");
    private final List<String> report = new ArrayList<>();
    /** The guest's /rg files, the same for every QEMU. */
    private List<Path> files;

    /** One QEMU of the guest: its console, QMP and human monitor. */
    private record Guest(String name, OutputProcess out, Path qmp, Path monitor) {
    }

    @AfterEach
    void cleanUp() throws Exception {
        keepLogs();
        for (Guest g : qemus) {
            RealGuestHarness.stop(g.out.process);
        }
        for (Daemon d : daemons) {
            d.process.destroy(); // SIGTERM, by the process handle
        }
        for (Daemon d : daemons) {
            if (!d.process.waitFor(60, TimeUnit.SECONDS)) {
                RealGuestHarness.stop(d.process);
            }
        }
        RealGuestHarness.deleteTree(work);
    }

    @Test
    void aGuestOnAnRbdImageVerifiesItsWritesSeesAResizeAndMovesBetweenTwoDaemons(MicroCeph ceph) throws Exception {
        long start = System.nanoTime();
        this.ceph = ceph;
        assertTrue(MIGRATIONS >= 1 && MIGRATIONS <= REGION_MB.length, "kickplug.rbd.guest.migrations is 1.."
                + REGION_MB.length);
        jar = LauncherJar.built();
        harness = RealGuestHarness.besideJar(jar);
        harness.prepare("rbd-guest-prepare");
        work = Files.createTempDirectory(Path.of("/tmp"), "kp-rbdg"); // sun_path holds 107 bytes
        image = "guest" + ProcessHandle.current().pid();
        long t = System.nanoTime();
        ceph.rbd("create", "--size", (IMAGE_BYTES >> 20) + "M", "rbd/" + image);
        Daemon a = startDaemon("a");
        Daemon b = startDaemon("b");
        a.awaitReady();
        b.awaitReady();
        a.run(attach());
        a.run("kp:vhost r --socket " + a.vhost + " --queues 2");
        a.client = onlyNewWatcher(Set.of());
        note("daemons A and B ready, A serves rbd/%s (librbd client.%d; features %s)", since(t), image, a.client,
                rbdInfo().get("features"));

        files = guestFiles();
        t = System.nanoTime();
        current = boot("qemu-a0", a, null);
        running = current;
        awaitGuest("RG-STEP-READY write", "the guest boots and reaches its first step");
        note("guest booted on QEMU-A (%s)", since(t), current.out.lines("RG: booting").stream().findFirst()
                .orElse(""));
        assertTrue(current.out.has("RG-QUEUES 2"), () -> "two queues:\n" + current.out.text());

        // 1. randwrite with crc32c verify, verify_only, and the guest's md5 against rbd export.
        step("write");
        assertEquals(a.client, lockOwner(), "the daemon whose guest wrote holds the exclusive lock");
        step("verify");
        step("sum16");
        String guestSum = md5Line(SUM_MB);
        t = System.nanoTime();
        byte[] exported = ceph.rbdBytes("export", "rbd/" + image, "-");
        assertEquals(md5(exported, SUM_MB << 20), guestSum, "rbd export holds what the guest read back (first "
                + SUM_MB + " MiB)");
        note("rbd export (%d MiB) equals the guest's read of the first %d MiB: md5 %s", since(t),
                exported.length >> 20, SUM_MB, guestSum);

        // 2. kp:resize on A reaches the guest.
        startStep("resize");
        awaitGuest("RG-RESIZE-WAIT size=" + IMAGE_BYTES / 512, "the guest watches /sys/block/vda/size");
        t = System.nanoTime();
        a.run("kp:resize r " + (GROWN_BYTES >> 20) + "M");
        endStep("resize", t);
        assertTrue(anyHas("RG-RESIZE-SEEN size=" + GROWN_BYTES / 512), () -> "the guest saw the new size:\n"
                + guestText());
        assertTrue(anyHas("vda: detected capacity change from " + IMAGE_BYTES / 512 + " to " + GROWN_BYTES / 512),
                () -> "the guest kernel logged the capacity change:\n" + guestText());
        assertEquals(GROWN_BYTES, ((Number) rbdInfo().get("size")).longValue(), "rbd info shows the new size");

        // 3. B attaches the same image; the guest moves A -> B (-> A -> B ...) while it writes.
        t = System.nanoTime();
        b.run(attach());
        b.run("kp:vhost r --socket " + b.vhost + " --queues 2");
        b.client = onlyNewWatcher(Set.of(a.client));
        note("daemon B attached and exports the image (librbd client.%d); lock held by client.%d", since(t),
                b.client, lockOwner());
        Daemon from = a;
        Daemon to = b;
        for (int i = 1; i <= MIGRATIONS; i++) {
            migrate(i, from, to);
            step("check" + i);
            Daemon swap = from;
            from = to;
            to = swap;
        }

        // 4. The daemon the guest left gives the disk up; the last verify and the whole disk against rbd export.
        Daemon left = to;
        Daemon serving = from;
        t = System.nanoTime();
        left.run("kp:vhost-stop r");
        left.run("kp:detach r");
        Set<Long> watchers = watchers();
        assertEquals(Set.of(serving.client), watchers, "after the detach on " + left.name + " only "
                + serving.name + " has the image open");
        note("daemon %s detached the disk; watchers %s, lock held by client.%d", since(t), left.name, watchers,
                lockOwner());
        step("final");
        step("sumall");
        String allSum = md5Line((int) (GROWN_BYTES >> 20));
        exported = ceph.rbdBytes("export", "rbd/" + image, "-");
        assertEquals(GROWN_BYTES, exported.length, "rbd export has the grown size");
        assertEquals(md5(exported, GROWN_BYTES), allSum, "rbd export holds what the guest read back (all of it)");
        note("rbd export (%d MiB) equals the guest's read of the whole disk: md5 %s", 0, exported.length >> 20,
                allSum);

        running = null;
        awaitGuest("RG-DONE", "the guest finishes");
        current.out.finish(60);
        String text = guestText();
        assertEquals(0, current.out.exitCode, () -> "the last QEMU's exit status:\n" + text);
        List<String> errors = text.lines().filter(l -> l.startsWith("RG-KERNEL-ERROR") || l.startsWith("RG-ERROR")
                || l.contains("I/O error")).toList();
        assertTrue(errors.isEmpty(), () -> "guest errors " + errors + ":\n" + text);
        for (Daemon d : daemons) {
            List<String> librbd = d.log().lines().filter(l -> l.contains("failed: errno")).toList();
            assertTrue(librbd.isEmpty(), () -> "daemon " + d.name + " logged librbd errors: " + librbd);
        }
        note("all steps passed (%d migration%s)", since(start), MIGRATIONS, MIGRATIONS == 1 ? "" : "s");
        System.out.println("RbdRealGuestIT summary:\n  " + String.join("\n  ", report));
    }

    /** Migration {@code i} from {@code from} to {@code to} while the guest runs step mig{i} (fio randwrite+verify). */
    private void migrate(int i, Daemon from, Daemon to) throws Exception {
        long t = System.nanoTime();
        Guest dest = start("qemu-" + to.name + i, to, "unix:" + work.resolve("mig" + i + ".sock"));
        await(() -> Files.exists(dest.qmp) && Files.exists(work.resolve("mig" + i + ".sock")) && to.connected(),
                "QEMU-" + to.name + i + " listens for the migration and has connected to daemon " + to.name);
        note("migration %d: QEMU-%s%d started with -incoming and connected to daemon %s", since(t), i,
                to.name.toUpperCase(), i, to.name);

        long requests = from.requests();
        long marked = from.pagesMarked();
        startStep("mig" + i);
        long stepStart = System.nanoTime();
        await(() -> from.requests() > requests + 200, "the guest writes through daemon " + from.name);
        long lockBefore = lockOwner();
        Map<String, Object> done;
        long migStart = System.nanoTime();
        long wallMs;
        LockWatch lock = new LockWatch(migStart, to.client);
        try (QmpClient q = QmpClient.negotiated(current.qmp)) {
            qmp(q, "migrate-set-parameters", "{\"downtime-limit\": 300, \"max-bandwidth\": 1073741824}");
            qmp(q, "migrate", "{\"uri\": \"unix:" + work.resolve("mig" + i + ".sock") + "\"}");
            AtomicReference<Map<String, Object>> last = new AtomicReference<>();
            await(() -> {
                last.set(info(qmpUnchecked(q, "query-migrate", null)));
                Object st = last.get().get("status");
                if ("failed".equals(st) || "cancelled".equals(st)) {
                    fail("migration " + i + " " + st + ": " + Json.write(last.get()) + "\n" + stallReport());
                }
                return "completed".equals(st);
            }, "migration " + i + " completes");
            wallMs = since(migStart);
            done = last.get();
            checkMemory(i, q, dest);
            running = null;
            try {
                q.command("{\"execute\": \"quit\"}");
            } catch (IOException e) {
                // QEMU may close the monitor before its answer: it quits either way (waited for below)
            }
        }
        long lockAtCompletion = lock.owner;
        long markedNow = from.pagesMarked() - marked;
        Guest source = current;
        source.out.finish(60);
        current = dest;
        running = dest;
        try (QmpClient q = QmpClient.negotiated(dest.qmp)) {
            await(() -> "running".equals(info(qmpUnchecked(q, "query-status", null)).get("status")),
                    "the guest runs on QEMU-" + to.name + i);
        }
        @SuppressWarnings("unchecked")
        Map<String, Object> ram = (Map<String, Object>) done.getOrDefault("ram", Map.of());
        note("migration %d %s -> %s: QMP total-time %s ms (wall %d ms), downtime %s ms, setup-time %s ms, "
                + "dirty-sync-count %s, %s bytes transferred; pages marked by daemon %s's dirty log %d; lock held by "
                + "client.%d before, client.%d at completion", 0, i, from.name.toUpperCase(), to.name.toUpperCase(),
                done.get("total-time"), wallMs, done.get("downtime"), done.get("setup-time"),
                ram.get("dirty-sync-count"), ram.get("transferred"), from.name, markedNow, lockBefore,
                lockAtCompletion);
        assertTrue(markedNow > 0, "daemon " + from.name + " marked pages in the dirty log during the migration");

        // The guest writes on at the destination: its first write takes librbd's exclusive lock from the source. Once
        // B holds it and a pass (the one the migration interrupted) has ended on B, the guest is told to stop after
        // the pass it runs then, which runs on B from start to end.
        String pass = "RG-FIO m" + i + " pass=";
        String exit = "RG-STEP-EXIT mig" + i + "=";
        try {
            await(() -> lock.owner == to.client && !dest.out.lines(pass).isEmpty() || anyHas(exit), "the guest "
                    + "writes through daemon " + to.name + " (which takes the exclusive lock) and ends a pass there");
        } finally {
            lock.stop();
        }
        dest.out.say("stop");
        await(() -> anyHas(exit), "step mig" + i + " ends");
        long stepMs = since(stepStart);
        String exitLine = exitLine("mig" + i);
        assertTrue(exitLine.endsWith("=0"), () -> "fio randwrite+verify across migration " + i + ": " + exitLine
                + "\n" + guestText());
        assertTrue(dest.out.has(exit), () -> "step mig" + i + " ended at the destination:\n" + guestText());
        int passesA = source.out.lines(pass).size();
        int passesB = dest.out.lines(pass).size();
        assertTrue(passesB >= 2, () -> "a pass across the migration and one more on " + to.name + ":\n"
                + guestText());
        assertEquals(to.client, lockOwner(), "daemon " + to.name + " holds librbd's exclusive lock after step mig" + i);
        note("step mig%d (fio randwrite+verify passes on %d-%d MiB): every pass exit 0, %d ended on %s and %d on %s; "
                + "%s", stepMs, i, REGION_MB[i - 1], REGION_MB[i - 1] + 16, passesA, from.name.toUpperCase(),
                passesB, to.name.toUpperCase(), stepFio("mig" + i));
        note("migration %d, librbd's exclusive lock (rbd lock ls, ms after migrate; completed at %d ms): %s", 0, i,
                wallMs, lock.history());
    }

    // --- the guest's files and steps

    /** The guest's /rg files: the fio jobs, one shell script per step, and the list of steps. */
    private List<Path> guestFiles() throws IOException {
        Path dir = Files.createDirectories(work.resolve("rg"));
        List<Path> list = new ArrayList<>();
        List<String> steps = new ArrayList<>(List.of("write", "verify", "sum16", "resize"));
        list.add(Files.writeString(dir.resolve("w.fio"), job(0, 1, false)));
        list.add(Files.writeString(dir.resolve("vw.fio"), job(0, 1, true)));
        list.add(Files.writeString(dir.resolve("write.sh"), fioScript(List.of("w"))));
        list.add(Files.writeString(dir.resolve("verify.sh"), fioScript(List.of("vw"))));
        list.add(Files.writeString(dir.resolve("sum16.sh"), sumScript(SUM_MB)));
        list.add(Files.writeString(dir.resolve("resize.sh"), String.join("\n",
                "before=$(cat /sys/block/vda/size)",
                "echo \"RG-RESIZE-WAIT size=$before\"",
                "i=0",
                "while [ \"$(cat /sys/block/vda/size)\" = \"$before\" ] && [ $i -lt 1200 ]; do sleep 0.1; "
                        + "i=$((i + 1)); done",
                "echo \"RG-RESIZE-SEEN size=$(cat /sys/block/vda/size)\"",
                "dmesg | grep -i 'capacity change' | sed 's/^/RG-RESIZE-KLOG: /'",
                "[ \"$(cat /sys/block/vda/size)\" != \"$before\" ]", "")));
        List<String> verifies = new ArrayList<>(List.of("vw"));
        for (int i = 1; i <= MIGRATIONS; i++) {
            list.add(Files.writeString(dir.resolve("m" + i + ".fio"), job(REGION_MB[i - 1], 1 + i, false)));
            list.add(Files.writeString(dir.resolve("vm" + i + ".fio"), job(REGION_MB[i - 1], 1 + i, true)));
            verifies.add("vm" + i);
            list.add(Files.writeString(dir.resolve("mig" + i + ".sh"), passesScript("m" + i)));
            list.add(Files.writeString(dir.resolve("check" + i + ".sh"), fioScript(verifies)));
            steps.add("mig" + i);
            steps.add("check" + i);
        }
        list.add(Files.writeString(dir.resolve("final.sh"), fioScript(verifies)));
        list.add(Files.writeString(dir.resolve("sumall.sh"), sumScript((int) (GROWN_BYTES >> 20))));
        steps.add("final");
        steps.add("sumall");
        list.add(Files.writeString(dir.resolve("steps"), String.join("\n", steps) + "\n"));
        return list;
    }

    /**
     * Two writers (one job section each, so one per queue as the guest's two vCPUs run them) on the two 8 MiB halves
     * of the 16 MiB at {@code offsetMb}: 16 KiB random writes with crc32c verify, fio reading everything back at the
     * end. {@code verifyOnly}: only that read-back, of what the same job wrote (the same seed and job order: fio
     * seeds each job from randseed and its number, so every run of a job writes the same blocks with the same data).
     */
    private static String job(int offsetMb, int seed, boolean verifyOnly) {
        List<String> lines = new ArrayList<>(List.of("[global]", "filename=/dev/vda", "direct=1", "ioengine=libaio",
                "bs=16k", "iodepth=16", "size=8m", "randseed=" + seed, "rw=randwrite", "verify=crc32c",
                "verify_fatal=1", "group_reporting=1"));
        if (verifyOnly) {
            lines.add("verify_only=1");
        }
        lines.addAll(List.of("[lo]", "offset=" + offsetMb + "m", "[hi]", "offset=" + (offsetMb + 8) + "m"));
        return String.join("\n", lines) + "\n";
    }

    /**
     * The migration step: job {@code job} (write and verify) pass after pass until a line comes on the console
     * (RG-FIO JOB pass=N exit=S ...); the first pass that fails ends it. Every pass writes the same data, so a
     * verify_only afterwards checks the last one.
     */
    private static String passesScript(String job) {
        return String.join("\n",
                "rm -f /tmp/stop",
                "(read -r line; : >/tmp/stop) </dev/console &",
                "n=0",
                "while [ ! -f /tmp/stop ]; do",
                "    n=$((n + 1))",
                "    fio --eta=never --output-format=terse --terse-version=3 /rg/" + job + ".fio </dev/null >/tmp/"
                        + job + ".out 2>&1",
                "    r=$?",
                "    grep -v '^3;' /tmp/" + job + ".out | sed \"s/^/RG-FIO-OUT " + job + " /\"",
                "    echo \"RG-FIO " + job + " pass=$n exit=$r iops=$(grep '^3;' /tmp/" + job
                        + ".out | cut -d';' -f8,49)\"",
                "    [ $r = 0 ] || exit $r",
                "done",
                "wait", "");
    }

    /** A step that runs fio on each of {@code jobs} (/rg/NAME.fio): RG-FIO NAME exit=S READ_IOPS;WRITE_IOPS. */
    private static String fioScript(List<String> jobs) {
        return String.join("\n",
                "s=0",
                "for j in " + String.join(" ", jobs) + "; do",
                "    fio --eta=never --output-format=terse --terse-version=3 /rg/$j.fio </dev/null >/tmp/$j.out 2>&1",
                "    r=$?",
                "    grep -v '^3;' /tmp/$j.out | sed \"s/^/RG-FIO-OUT $j /\"",
                "    echo \"RG-FIO $j exit=$r iops=$(grep '^3;' /tmp/$j.out | cut -d';' -f8,49)\"",
                "    [ $r = 0 ] || s=$r",
                "done",
                "exit $s", "");
    }

    /** A step that prints RG-MD5 MB SUM: the md5 of the disk's first MB MiB as the guest reads them. */
    private static String sumScript(int mb) {
        return String.join("\n",
                "t0=$(cut -d' ' -f1 /proc/uptime)",
                "sum=$(dd if=/dev/vda bs=1M count=" + mb + " iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)",
                "t1=$(cut -d' ' -f1 /proc/uptime)",
                "echo \"RG-MD5 " + mb + " $sum\"",
                "t2=$(cut -d' ' -f1 /proc/uptime)",
                "dd if=/dev/vda of=/dev/null bs=1M count=" + mb + " iflag=direct 2>/dev/null",
                "echo \"RG-FIO md5 of " + mb + " MiB: guest uptime $t0 to $t1 s; dd alone $t2 to $(cut -d' ' -f1 "
                        + "/proc/uptime) s\"", "");
    }

    private void step(String name) throws Exception {
        startStep(name);
        endStep(name, System.nanoTime());
    }

    /** Waits until the guest is at step {@code name} and tells it to go. */
    private void startStep(String name) throws Exception {
        awaitGuest("RG-STEP-READY " + name, "the guest is ready for step " + name);
        current.out.say("go");
    }

    /** Waits until step {@code name} ends with exit 0 (fio's verify passed, no I/O error). */
    private void endStep(String name, long since) throws Exception {
        awaitGuest("RG-STEP-EXIT " + name + "=", "step " + name + " ends");
        String line = exitLine(name);
        assertTrue(line.endsWith("=0"), () -> "step " + name + " failed: " + line + "\n" + guestText());
        note("step %s: %s", since(since), name, stepFio(name));
    }

    private String exitLine(String step) {
        return guestText().lines().filter(l -> l.startsWith("RG-STEP-EXIT " + step + "=")).findFirst().orElse("");
    }

    /** The RG-FIO and RG-MD5 lines step {@code step} printed (fio's exit and read;write IOPS per job). */
    private String stepFio(String step) {
        List<String> l = guestText().lines().dropWhile(s -> !s.startsWith("RG-STEP-READY " + step))
                .takeWhile(s -> !s.startsWith("RG-STEP-EXIT " + step + "="))
                .filter(s -> s.startsWith("RG-FIO ") || s.startsWith("RG-RESIZE-SEEN")).toList();
        return String.join(", ", l).replace("RG-FIO ", "");
    }

    private String md5Line(int mb) {
        return guestText().lines().filter(l -> l.startsWith("RG-MD5 " + mb + " ")).findFirst()
                .orElseThrow(() -> new AssertionError("no RG-MD5 " + mb + ":\n" + guestText()))
                .substring(("RG-MD5 " + mb + " ").length()).trim();
    }

    // --- QEMUs

    private List<String> guestCommand(Daemon d, Path qmp, String incoming) {
        List<String> c = new ArrayList<>(harness.command("run", harness.cache().toString(), d.vhost.toString(),
                work.resolve("rg/w.fio").toString(), "--queues", "2", "--smp", "2", "--mem", "512M", "--qmp",
                qmp.toString()));
        for (Path f : files) {
            c.addAll(List.of("--rg-file", f.toString()));
        }
        if (incoming != null) {
            // Paused (-S) until the two ends' memory is compared (checkMemory).
            c.addAll(List.of("--incoming", incoming, "--paused"));
        }
        return c;
    }

    /**
     * Compares the guest memory of the paused source with the destination's, which has not run yet
     * ({@link MigratedMemory}), then lets the destination run. A page that differs was lost by the migration: by
     * QEMU's own dirty tracking of the guest's CPUs (TCG on a busy host, docs/real-guest.md) or by the back-end's
     * dirty log; the test fails with the pages rather than let the guest crash on corrupt memory.
     */
    private void checkMemory(int i, QmpClient source, Guest dest) throws IOException {
        Path a = work.resolve("memory-source.bin");
        Path b = work.resolve("memory-destination.bin");
        try (QmpClient d = QmpClient.negotiated(dest.qmp)) {
            MigratedMemory.Result r;
            try {
                qmp(source, "pmemsave", MigratedMemory.pmemsave(512L << 20, a));
                qmp(d, "pmemsave", MigratedMemory.pmemsave(512L << 20, b));
                r = MigratedMemory.compare(a, b, null);
            } finally {
                Files.deleteIfExists(a);
                Files.deleteIfExists(b);
            }
            note("migration %d: %s", 0, i, r);
            if (!r.same()) {
                fail("migration " + i + " lost guest memory: " + r);
            }
            qmp(d, "cont", null);
        }
    }

    private Guest boot(String name, Daemon d, String incoming) throws Exception {
        Path qmp = work.resolve(name + ".qmp");
        Path monitor = work.resolve(name + ".mon");
        OutputProcess p = RealGuestOutput.boot(name, guestCommand(d, qmp, incoming),
                Map.of("RG_MONITOR", monitor.toString())).guest();
        Guest g = new Guest(name, p, qmp, monitor);
        qemus.add(g);
        return g;
    }

    private Guest start(String name, Daemon d, String incoming) throws IOException {
        Path qmp = work.resolve(name + ".qmp");
        Path monitor = work.resolve(name + ".mon");
        OutputProcess p = OutputProcess.start(name, guestCommand(d, qmp, incoming),
                Map.of("RG_MONITOR", monitor.toString()));
        Guest g = new Guest(name, p, qmp, monitor);
        qemus.add(g);
        return g;
    }

    private static Map<String, Object> qmp(QmpClient q, String command, String arguments) throws IOException {
        Map<String, Object> r = q.command("{\"execute\": \"" + command + "\"" + (arguments == null ? ""
                : ", \"arguments\": " + arguments) + "}");
        if (!r.containsKey("return")) {
            throw new IOException(command + " failed: " + Json.write(r));
        }
        return r;
    }

    private static Map<String, Object> qmpUnchecked(QmpClient q, String command, String arguments) {
        try {
            return qmp(q, command, arguments);
        } catch (IOException e) {
            throw new AssertionError(e);
        }
    }

    @SuppressWarnings("unchecked")
    private static Map<String, Object> info(Map<String, Object> answer) {
        return (Map<String, Object>) answer.get("return");
    }

    private boolean anyHas(String text) {
        for (Guest g : qemus) {
            if (g.out.has(text)) {
                return true;
            }
        }
        return false;
    }

    /** Every QEMU's console, in start order (the guest's console moves with it). */
    private String guestText() {
        StringBuilder b = new StringBuilder();
        for (Guest g : qemus) {
            b.append(g.out.text()).append('\n');
        }
        return b.toString();
    }

    /** Waits for a console line with {@code text} on any QEMU; the current QEMU must keep running meanwhile. */
    private void awaitGuest(String text, String what) {
        await(() -> {
            if (anyHas(text)) {
                return true;
            }
            if (!current.out.process.isAlive()) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500)); // the rest of its output
                if (anyHas(text)) {
                    return true;
                }
                fail(current.name + " ended (status " + current.out.process.exitValue() + ") before " + what + "\n"
                        + guestText() + "\n" + daemonLogs());
            }
            return false;
        }, what);
    }

    // --- daemons, cluster

    private String attach() {
        return "kp:attach --queues 2 --backend rbd --pool rbd --image " + image + " --conf " + ceph.conf() + " r";
    }

    private Daemon startDaemon(String name) throws IOException {
        Path control = work.resolve(name + ".ctl");
        Path pid = work.resolve(name + ".pid");
        Path log = work.resolve("daemon-" + name + ".log");
        List<String> cmd = LauncherJar.command(jar, work);
        cmd.addAll(List.of("--daemon", "--state", "none", "--control", control.toString(), "--pidfile",
                pid.toString(), "--log-level", LOG_LEVEL));
        Process p = new ProcessBuilder(cmd).directory(work.toFile()).redirectInput(Redirect.from(new File("/dev/null")))
                .redirectOutput(log.toFile()).redirectErrorStream(true).start();
        Daemon d = new Daemon(name, p, control, pid, work.resolve(name + ".sock"), log);
        daemons.add(d);
        return d;
    }

    /** The librbd clients watching the image ({@code rbd status}): the daemons that have it open. */
    private Set<Long> watchers() throws Exception {
        String json = ceph.rbd("status", "--format", "json", "rbd/" + image);
        Set<Long> ids = new TreeSet<>();
        Matcher m = Pattern.compile("\"client\"\\s*:\\s*(\\d+)").matcher(json);
        while (m.find()) {
            ids.add(Long.parseLong(m.group(1)));
        }
        return ids;
    }

    private long onlyNewWatcher(Set<Long> known) throws Exception {
        Set<Long> now = watchers();
        now.removeAll(known);
        assertEquals(1, now.size(), () -> "one new watcher of rbd/" + image + " besides " + known + ": " + now);
        return now.iterator().next();
    }

    /** The librbd client holding the image's exclusive lock ({@code rbd lock ls}), -1 when none does. */
    private long lockOwner() {
        try {
            String out = ceph.rbd("lock", "ls", "--format", "json", "rbd/" + image);
            Matcher m = Pattern.compile("client\\.(\\d+)").matcher(out);
            return m.find() ? Long.parseLong(m.group(1)) : -1;
        } catch (Exception e) {
            throw new AssertionError("rbd lock ls: " + e, e);
        }
    }

    @SuppressWarnings("unchecked")
    private Map<String, Object> rbdInfo() throws Exception {
        return (Map<String, Object>) Json.parse(ceph.rbd("info", "--format", "json", "rbd/" + image));
    }

    private static String md5(byte[] data, long bytes) throws Exception {
        MessageDigest md = MessageDigest.getInstance("MD5");
        md.update(data, 0, (int) Math.min(bytes, data.length));
        return HexFormat.of().formatHex(md.digest());
    }

    // --- waiting, reporting

    private void await(BooleanSupplier condition, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(STEP_SECONDS);
        while (!condition.getAsBoolean()) {
            if (System.nanoTime() - deadline > 0) {
                fail("timed out after " + STEP_SECONDS + " s waiting until " + what + "\n" + stallReport()
                        + "\n--- consoles\n" + guestText() + "\n" + daemonLogs());
            }
            for (Daemon d : daemons) {
                if (!d.process.isAlive()) {
                    fail("daemon " + d.name + " ended (status " + d.process.exitValue() + ") while waiting until "
                            + what + "\n" + daemonLogs());
                }
            }
            Guest g = running;
            if (g != null && !g.out.process.isAlive()) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(500)); // the rest of its output
                if (condition.getAsBoolean()) {
                    return;
                }
                fail(g.name + " ended (status " + g.out.process.exitValue() + ") while waiting until " + what
                        + "\n--- consoles\n" + guestText() + "\n" + stallReport() + "\n" + daemonLogs());
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        }
    }

    /**
     * What a stalled guest leaves to see: each running QEMU's view of its virtqueues and vhost queues (indices,
     * in-flight counts), each daemon's counters and export state, and who holds the lock.
     */
    private String stallReport() {
        StringBuilder b = new StringBuilder("--- state at the timeout (load " + loadAverage() + ")\n");
        for (Guest g : qemus) {
            if (g.out.process.isAlive() && Files.exists(g.monitor)) {
                b.append("QEMU ").append(g.name).append('\n').append(HumanMonitor.virtqueues(g.monitor, 2));
            }
        }
        for (Daemon d : daemons) {
            if (d.process.isAlive()) {
                b.append("daemon ").append(d.name).append(" kp:stats --json r: ").append(d.tryRun("kp:stats --json r"))
                        .append("\ndaemon ").append(d.name).append(" kp:vhost-list --json: ")
                        .append(d.tryRun("kp:vhost-list --json")).append('\n');
            }
        }
        try {
            b.append("rbd lock holder client.").append(lockOwner()).append(", watchers ").append(watchers());
        } catch (Exception | AssertionError e) {
            b.append("rbd: ").append(e);
        }
        return b.toString();
    }

    private String daemonLogs() {
        StringBuilder b = new StringBuilder();
        for (Daemon d : daemons) {
            b.append("--- daemon ").append(d.name).append('\n').append(d.log()).append('\n');
        }
        return b.toString();
    }

    /** Prints and keeps one line of the report: {@code format} with {@code args}, then the time and the load. */
    private void note(String format, long ms, Object... args) {
        String line = String.format(format, args) + (ms > 0 ? " [" + ms + " ms]" : "") + " (load "
                + loadAverage() + ")";
        report.add(line);
        System.out.println("RbdRealGuestIT: " + line);
    }

    private static long since(long nanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - nanos);
    }

    private static String loadAverage() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return f[0] + " " + f[1] + " " + f[2];
        } catch (IOException e) {
            return "?";
        }
    }

    /** Keeps the daemons' logs and every QEMU's console in target/rbd-real-guest/TIME (the work folder goes). */
    private void keepLogs() {
        if (work == null || jar == null) {
            return;
        }
        try {
            Path dir = jar.getParent().resolve("rbd-real-guest").resolve(java.time.LocalDateTime.now().toString()
                    .replace(':', '-'));
            Files.createDirectories(dir);
            for (Daemon d : daemons) {
                if (Files.exists(d.log)) {
                    Files.copy(d.log, dir.resolve(d.log.getFileName()));
                }
            }
            for (Guest g : qemus) {
                Files.writeString(dir.resolve(g.name + ".log"), g.out.text());
            }
            Files.writeString(dir.resolve("report.txt"), String.join("\n", report) + "\n");
        } catch (IOException | RuntimeException e) {
            System.err.println("RbdRealGuestIT: logs not kept: " + e);
        }
    }

    /**
     * Who holds the image's exclusive lock, polled with {@code rbd lock ls} on a thread of its own (each poll is one
     * rbd process: some 100 ms apart at best) until {@code until} holds it or {@link #stop}: each change with its time.
     */
    private final class LockWatch {
        private final long since;
        private final long until;
        private final List<String> changes = new java.util.concurrent.CopyOnWriteArrayList<>();
        private final Thread thread;
        private volatile boolean stopped;
        private volatile int polls;
        volatile long owner = -2;

        LockWatch(long since, long until) {
            this.since = since;
            this.until = until;
            thread = new Thread(this::run, "rbd-lock-watch");
            thread.setDaemon(true);
            thread.start();
        }

        private void run() {
            while (!stopped && owner != until) {
                long o;
                try {
                    o = lockOwner();
                } catch (AssertionError e) {
                    changes.add(e.getMessage());
                    return;
                }
                polls++;
                if (o != owner) {
                    changes.add((o < 0 ? "none" : "client." + o) + " at " + since(since) + " ms");
                    owner = o;
                }
            }
        }

        void stop() throws InterruptedException {
            stopped = true;
            thread.join(30_000);
        }

        String history() {
            return String.join(", ", changes) + " (" + polls + " polls)";
        }
    }

    /** One daemon process ({@code kickplug.jar --daemon --control}) with the disk {@code r} and its export. */
    private static final class Daemon {
        final String name;
        final Process process;
        final Path control;
        final Path pid;
        final Path vhost;
        final Path log;
        /** Its librbd client id, once it opened the image. */
        long client = -1;

        Daemon(String name, Process process, Path control, Path pid, Path vhost, Path log) {
            this.name = name;
            this.process = process;
            this.control = control;
            this.pid = pid;
            this.vhost = vhost;
            this.log = log;
        }

        void awaitReady() {
            Conditions.await(() -> Files.exists(pid) || !process.isAlive(), "daemon " + name + " ready", 120);
            assertTrue(process.isAlive(), () -> name + " died: " + log());
        }

        String log() {
            try {
                return Files.readString(log, StandardCharsets.UTF_8);
            } catch (IOException e) {
                return e.toString();
            }
        }

        /** One statement on the control socket; its result (the command's JSON or text). The answer must be ok. */
        Object run(String statement) throws IOException {
            String answer = answer(statement);
            @SuppressWarnings("unchecked")
            Map<String, Object> a = (Map<String, Object>) Json.parse(answer);
            assertEquals(Boolean.TRUE, a.get("ok"), () -> "daemon " + name + ": " + statement + " -> " + answer);
            return a.get("result");
        }

        /** {@link #run} bounded by 10 s, for reports: the answer or what went wrong, never throws. */
        String tryRun(String statement) {
            CompletableFuture<String> f = CompletableFuture.supplyAsync(() -> {
                try {
                    return answer(statement);
                } catch (IOException e) {
                    return e.toString();
                }
            });
            try {
                return f.get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                return "(no answer within 10 s: " + e + ")";
            }
        }

        private String answer(String statement) throws IOException {
            try (SocketChannel ch = SocketChannel.open(UnixDomainSocketAddress.of(control))) {
                ByteBuffer line = ByteBuffer.wrap((statement + "\n").getBytes(StandardCharsets.UTF_8));
                while (line.hasRemaining()) {
                    ch.write(line);
                }
                StringBuilder answer = new StringBuilder();
                var in = Channels.newInputStream(ch);
                byte[] buf = new byte[8192];
                java.io.ByteArrayOutputStream bytes = new java.io.ByteArrayOutputStream();
                int n;
                while ((n = in.read(buf)) >= 0) {
                    int nl = -1;
                    for (int i = 0; i < n; i++) {
                        if (buf[i] == '\n') {
                            nl = i;
                            break;
                        }
                    }
                    bytes.write(buf, 0, nl < 0 ? n : nl);
                    if (nl >= 0) {
                        break;
                    }
                }
                answer.append(bytes.toString(StandardCharsets.UTF_8));
                return answer.toString();
            }
        }

        @SuppressWarnings("unchecked")
        private Map<String, Object> stats() {
            try {
                return (Map<String, Object>) run("kp:stats --json r");
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }

        /** Requests the disk's export took from its front-ends (all queues, all sessions of the export). */
        @SuppressWarnings("unchecked")
        long requests() {
            Map<String, Object> s = stats();
            List<Map<String, Object>> queues = (List<Map<String, Object>>) s.getOrDefault("vhost_user_export",
                    s.get("queues"));
            long n = 0;
            for (Map<String, Object> q : queues) {
                n += ((Number) q.get("requests")).longValue();
            }
            return n;
        }

        /** Pages the export's dirty log marked since it began ({@code dirty_log}). */
        @SuppressWarnings("unchecked")
        long pagesMarked() {
            long n = 0;
            for (Map<String, Object> d : (List<Map<String, Object>>) stats().getOrDefault("dirty_log", List.of())) {
                n += ((Number) d.get("pages_marked")).longValue();
            }
            return n;
        }

        /** Whether a front-end is connected to the export ({@code kp:vhost-list --json}). */
        @SuppressWarnings("unchecked")
        boolean connected() {
            try {
                Map<String, Object> l = (Map<String, Object>) run("kp:vhost-list --json");
                for (Map<String, Object> e : (List<Map<String, Object>>) l.get("exports")) {
                    if (e.get("connection") != null) {
                        return true;
                    }
                }
                return false;
            } catch (IOException e) {
                throw new AssertionError(e);
            }
        }
    }
}
