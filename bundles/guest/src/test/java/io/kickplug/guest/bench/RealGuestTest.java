package io.kickplug.guest.bench;

import static org.junit.jupiter.api.Assertions.*;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStats;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.backend.NullBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real-guest part of {@code kp:bench seeds} without QEMU: fio's terse lines, the initramfs archives, the
 * options, the "not run" paths, the step protocol against a scripted console, and one whole run of the three
 * seeds against a scripted guest on the real disk registry.
 */
class RealGuestTest {

    private static final long SECOND = 1_000_000_000L;

    private static String resource(String name) throws IOException {
        try (InputStream in = RealGuestTest.class.getResourceAsStream(name)) {
            assertNotNull(in, name);
            return new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
        }
    }

    // ------------------------------------------------------------------------------------------- fio terse

    @Test
    void aRandreadTerseLineOfFio333GivesIopsAndLatencies() throws IOException {
        FioTerse t = FioTerse.parse(resource("fio-3.33-randread.terse"));
        assertEquals("r", t.job());
        assertEquals(0, t.error());
        assertEquals(7494, t.readIops());
        assertEquals(0, t.writeIops());
        assertEquals(7494, t.iops());
        assertEquals(130.462156, t.clatMeanUs(), 1e-9);
        assertEquals(2244, t.clatP99Us());
        assertEquals(130.601155, t.latMeanUs(), 1e-9);
        assertEquals(1001, t.runtimeMs());
    }

    @Test
    void aRandrwLineSumsTheDirectionsAndWeighsTheLatencies() throws IOException {
        FioTerse t = FioTerse.parse(resource("fio-3.33-randrw.terse"));
        assertEquals(5070, t.readIops());
        assertEquals(5122, t.writeIops());
        assertEquals(10192, t.iops());
        assertEquals((5070 * 152.692621 + 5122 * 7.243247) / 10192, t.clatMeanUs(), 1e-6);
        assertEquals(3293, t.clatP99Us(), "the larger direction's p99");
    }

    @Test
    void otherOutputIsRefusedWithTheReason() throws IOException {
        String line = resource("fio-3.33-randread.terse");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> FioTerse.parse("fio: pid=1, err=5/file:"))
                .getMessage().startsWith("not fio terse version 3 output"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> FioTerse.parse(line.substring(0, 200)))
                .getMessage().contains("expected at least 87"));
        String broken = line.replaceFirst(";7494;", ";many;");
        assertEquals("fio terse field 8 is not a number: 'many'",
                assertThrows(IllegalArgumentException.class, () -> FioTerse.parse(broken)).getMessage());
    }

    // ------------------------------------------------------------------------------------------- cpio

    @Test
    void aJobArchiveAppendedToABaseIsFoundAfterItAndEveryEntryIsAligned(@TempDir Path dir) throws IOException {
        Path base = dir.resolve("base.cpio");
        Map<String, byte[]> baseFiles = new LinkedHashMap<>();
        baseFiles.put("init", "#!/bin/sh\necho RG-STEP-READY\n".getBytes(StandardCharsets.UTF_8));
        byte[] b = Cpio.newc(baseFiles);
        assertEquals(0, b.length % 4);
        // An odd size, as a base built by another tool might have.
        Files.write(base, java.util.Arrays.copyOf(b, b.length + 3));
        Map<String, byte[]> jobs = new LinkedHashMap<>();
        jobs.put("rg/a.fio", "[a]\nrw=read\n".getBytes(StandardCharsets.UTF_8));
        jobs.put("rg/steps", "a\n".getBytes(StandardCharsets.UTF_8));
        Path initrd = dir.resolve("initrd");
        Cpio.appendAligned(base, Cpio.newc(jobs), initrd);
        byte[] all = Files.readAllBytes(initrd);
        assertEquals(b.length + 4, all.length - Cpio.newc(jobs).length, "padded to the next 4-byte boundary");
        assertEquals("070701", new String(all, b.length + 4, 6, StandardCharsets.US_ASCII));
        assertArrayEquals("a\n".getBytes(StandardCharsets.UTF_8), Cpio.find(new ByteArrayInputStream(all), "rg/steps"));
        assertArrayEquals(baseFiles.get("init"), Cpio.find(new ByteArrayInputStream(all), "init"));
        assertNull(Cpio.find(new ByteArrayInputStream(all), "rg/b.fio"));
        assertNull(Cpio.find(new ByteArrayInputStream(new byte[] {0x1f, (byte) 0x8b, 8, 0}), "init"), "gzip: not newc");
        assertThrows(IllegalArgumentException.class, () -> Cpio.newc(Map.of("/init", new byte[0])));
    }

    // ------------------------------------------------------------------------------------------- options

    @Test
    void realGuestOptionsAreTakenOutAndTheRestLeftForTheSeeds() {
        RealGuestOptions.Split s = RealGuestOptions.extract(List.of("--runtime", "1", "--real-guest", "--guest-image",
                "/img", "--json=x.json", "--guest-runtime=2", "--qemu", "/usr/bin/q"), Map.of());
        assertEquals(List.of("--runtime", "1", "--json=x.json"), s.rest());
        assertFalse(s.realGuest().only());
        assertEquals(Path.of("/img"), s.realGuest().imageDir());
        assertEquals("/usr/bin/q", s.realGuest().qemu());
        assertEquals(2_000_000_000L, s.realGuest().runtimeNanos());
        assertEquals(RealGuestOptions.DEFAULT_ROUNDS, s.realGuest().rounds());
        assertEquals(5, RealGuestOptions.extract(List.of("--real-guest", "--guest-rounds", "5"), Map.of()).realGuest()
                .rounds());
        RealGuestOptions.Split none = RealGuestOptions.extract(List.of("--runtime", "1"), Map.of());
        assertNull(none.realGuest());
        assertEquals(List.of("--runtime", "1"), none.rest());
        RealGuestOptions only = RealGuestOptions.extract(List.of("--real-guest-only"),
                Map.of(RealGuestOptions.IMAGE_ENV, "/from/env")).realGuest();
        assertTrue(only.only());
        assertEquals(Path.of("/from/env"), only.imageDir(), "the environment names the image when the option does not");
        assertEquals(RealGuestOptions.DEFAULT_RUNTIME_NANOS, only.runtimeNanos());
        assertEquals(Path.of(RealGuestOptions.DEFAULT_IMAGE).toAbsolutePath(),
                RealGuestOptions.extract(List.of("--real-guest"), Map.of()).realGuest().imageDir());
    }

    @Test
    void badRealGuestOptionsSayWhatIsWrong() {
        assertEquals("--guest-image needs --real-guest or --real-guest-only", extractError("--guest-image", "/x"));
        assertEquals("--real-guest takes no value", extractError("--real-guest=yes"));
        assertEquals("option --real-guest given twice", extractError("--real-guest", "--real-guest"));
        assertTrue(extractError("--real-guest", "--qemu").startsWith("--qemu needs a value"));
        assertTrue(extractError("--real-guest", "--guest-runtime", "0.5").startsWith("--guest-runtime must be whole"),
                extractError("--real-guest", "--guest-runtime", "0.5"));
        assertEquals("--guest-rounds must be from 1 to 20: 0", extractError("--real-guest", "--guest-rounds", "0"));
        assertEquals("--guest-rounds must be an integer: 'x'", extractError("--real-guest", "--guest-rounds=x"));
        assertTrue(extractError("--real-guest", "--guest-runtime", "soon").startsWith("invalid --runtime"),
                extractError("--real-guest", "--guest-runtime", "soon"));
    }

    private static String extractError(String... args) {
        return assertThrows(IllegalArgumentException.class, () -> RealGuestOptions.extract(List.of(args), Map.of()))
                .getMessage();
    }

    // ------------------------------------------------------------------------------------------- not run

    @Test
    void withoutQemuOrAnImageNothingRunsAndTheReportSaysWhy(@TempDir Path dir) throws IOException {
        RealGuestImage.Located noQemu = RealGuestImage.locate(null, dir, Map.of("PATH", dir.toString()));
        assertEquals("qemu-system-x86_64 is not on the PATH (install qemu-system-x86, or pass --qemu PATH)",
                noQemu.missing());
        Path qemu = executable(dir.resolve("bin/qemu-system-x86_64"));
        Map<String, String> env = Map.of("PATH", "/nonexistent:" + qemu.getParent());
        String noDir = RealGuestImage.locate(null, dir.resolve("img"), env).missing();
        assertTrue(noDir.startsWith("no guest image directory " + dir.resolve("img") + ": build it with "
                + "bundles/vhost-user/src/test/realguest/realguest.sh prepare DIR"), noDir);
        Path img = Files.createDirectories(dir.resolve("img"));
        assertTrue(RealGuestImage.locate(null, img, env).missing().startsWith("no vmlinuz in " + img));
        Files.writeString(img.resolve("vmlinuz"), "kernel");
        Files.write(img.resolve("base.cpio"), Cpio.newc(Map.of("init", "echo RG-FIO-BEGIN\n".getBytes())));
        assertTrue(RealGuestImage.locate(null, img, env).missing().startsWith("the initramfs in " + img
                + " was built before step mode"));
        Files.write(img.resolve("base.cpio"), Cpio.newc(Map.of("init", "echo RG-STEP-READY $step\n".getBytes())));
        Files.writeString(img.resolve("kernel-version"), "6.1.0-57-cloud-amd64\n");
        RealGuestImage.Located found = RealGuestImage.locate(null, img, env);
        assertNull(found.missing());
        assertEquals(qemu, found.image().qemu());
        assertEquals("6.1.0-57-cloud-amd64", found.image().kernelVersion());
        assertEquals(dir + " is not an executable file (--qemu)", RealGuestImage.locate(dir.toString(), img, env)
                .missing().replace("/ is", " is"));

        RealGuestReport r = new RealGuestBench(null, null, null, null).run(new RealGuestOptions(false, img, null,
                RealGuestOptions.DEFAULT_RUNTIME_NANOS, 1), env);
        assertEquals("the vhost-user bundle (kp:vhost) is not active in this runtime", r.notRun());
        String text = RealGuestFormat.text(r, List.of());
        assertTrue(text.contains("real Linux guest: not run: the vhost-user bundle (kp:vhost) is not active"), text);
    }

    @Test
    void theAcceleratorIsKvmOnlyWithHardwareVirtualizationAndAWritableDevice() {
        assertEquals("tcg", RealGuestImage.accel("flags : fpu vme de pse tsc msr hypervisor", true));
        assertEquals("kvm", RealGuestImage.accel("flags : fpu vmx ept", true));
        assertEquals("kvm", RealGuestImage.accel("flags : fpu svm npt", true));
        assertEquals("tcg", RealGuestImage.accel("flags : fpu vmx", false));
        assertEquals("tcg", RealGuestImage.accel("flags : fpu vmxx svmx", true), "whole words only");
    }

    private static Path executable(Path p) throws IOException {
        Files.createDirectories(p.getParent());
        Files.writeString(p, "#!/bin/sh\necho 'QEMU emulator version 7.2.0 (scripted)'\n");
        p.toFile().setExecutable(true);
        return p;
    }

    // ------------------------------------------------------------------------------------------- steps

    /**
     * A guest as the harness's /init in step mode: READY, then after the host's line the step's lines; a step named
     * in {@code fails} exits 1.
     */
    static final class ScriptedGuest implements GuestConsole {
        final Deque<String> lines = new ArrayDeque<>();
        final List<String> steps;
        final Map<String, Double> iops;
        final List<String> sent = new ArrayList<>();
        final String fails;
        int next;
        boolean closed;

        ScriptedGuest(List<String> steps, Map<String, Double> iops, String fails) {
            this.steps = steps;
            this.iops = iops;
            this.fails = fails;
            lines.add("RG-MARK init 5.14");
            lines.add("RG-QUEUES 2");
            lines.add("RG-STEP-READY " + steps.get(0));
        }

        @Override
        public String readLine(long timeoutNanos) {
            String l = lines.poll();
            return l == null ? null : l;
        }

        @Override
        public void writeLine(String line) {
            sent.add(line);
            String step = steps.get(next++);
            lines.add(line); // the console's echo
            lines.add("RG-STEP-IRQS " + step + " 1000");
            if (step.equals(fails)) {
                lines.add("RG-STEP-OUT " + step + " fio: io_u error on file /dev/vda: Input/output error");
                lines.add("RG-STEP-EXIT " + step + "=1");
            } else {
                // Rounds 1, 2, 3 of a variant ("mutex", "mutex_2", "mutex_3"): 1.0, 0.9, 1.1 times its IOPS, so the
                // median is the variant's.
                int u = step.indexOf('_');
                int round = u < 0 ? 1 : Integer.parseInt(step.substring(u + 1));
                String t = terse(step, iops.getOrDefault(u < 0 ? step : step.substring(0, u), 1000.0)
                        * (round == 1 ? 1.0 : round == 2 ? 0.9 : 1.1));
                lines.add("RG-STEP-OUT " + step + " " + t);
                lines.add("RG-STEP-EXIT " + step + "=0");
            }
            if (next < steps.size()) {
                lines.add("RG-STEP-READY " + steps.get(next));
            } else {
                lines.add("RG-STEPS-DONE");
                lines.add("RG-DONE");
                lines.add(END);
            }
        }

        @Override
        public List<String> tail() {
            return List.of("tail");
        }

        @Override
        public void close() {
            closed = true;
        }
    }

    /** A terse v3 line of a randread job with {@code iops} read IOPS. */
    static String terse(String job, double iops) {
        String[] f;
        try {
            f = resource("fio-3.33-randread.terse").split(";", -1);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        f[2] = job;
        f[7] = String.valueOf((long) iops);
        return String.join(";", f);
    }

    @Test
    void stepsRunInOrderWithTheHooksAroundEach() throws Exception {
        ScriptedGuest guest = new ScriptedGuest(List.of("warmup", "a", "b"), Map.of("a", 500.0, "b", 700.0), null);
        List<String> calls = new ArrayList<>();
        List<RealGuestSteps.Output> out = RealGuestSteps.run(guest, guest.steps, new RealGuestSteps.Hooks() {
            @Override
            public void before(String step) {
                calls.add("before " + step);
            }

            @Override
            public void after(String step) {
                calls.add("after " + step);
            }
        }, SECOND, SECOND);
        assertEquals(List.of("before warmup", "after warmup", "before a", "after a", "before b", "after b"), calls);
        assertEquals(List.of("go", "go", "go"), guest.sent);
        assertEquals(List.of("warmup", "a", "b"), out.stream().map(RealGuestSteps.Output::step).toList());
        assertEquals(500, out.get(1).fio().iops());
        assertEquals(1000, out.get(2).guestIrqs());
    }

    @Test
    void aFailingStepAGuestThatEndsAndAnOldInitramfsAreErrorsThatSayWhy() throws Exception {
        RealGuestSteps.Hooks none = new RealGuestSteps.Hooks() {
            @Override
            public void before(String step) {
            }

            @Override
            public void after(String step) {
            }
        };
        ScriptedGuest failing = new ScriptedGuest(List.of("a", "b"), Map.of(), "b");
        String why = assertThrows(IllegalStateException.class, () -> RealGuestSteps.run(failing, failing.steps, none,
                SECOND, SECOND)).getMessage();
        assertTrue(why.startsWith("real guest, step b: fio exited with 1, no terse result: fio: io_u error"), why);

        GuestConsole ended = console("RG-MARK init 1", GuestConsole.END);
        why = assertThrows(IllegalStateException.class, () -> RealGuestSteps.run(ended, List.of("a"), none, SECOND, SECOND))
                .getMessage();
        assertTrue(why.startsWith("real guest, step a: the guest's console ended (QEMU exited)"), why);

        GuestConsole old = console("RG-FIO-BEGIN", "RG-ERROR no job file");
        why = assertThrows(IllegalStateException.class, () -> RealGuestSteps.run(old, List.of("a"), none, SECOND, SECOND))
                .getMessage();
        assertTrue(why.contains("the initramfs has no step mode: rebuild it with realguest.sh prepare"), why);

        GuestConsole refused = console("qemu-system-x86_64: warning: host doesn't support requested feature",
                "qemu-system-x86_64: -chardev socket,id=c0,path=/x: Failed to connect to '/x': Connection refused");
        why = assertThrows(IllegalStateException.class, () -> RealGuestSteps.run(refused, List.of("a"), none, SECOND,
                SECOND)).getMessage();
        assertTrue(why.startsWith("real guest, step a: 'qemu-system-x86_64: -chardev socket"), why);

        GuestConsole silent = console();
        why = assertThrows(IllegalStateException.class, () -> RealGuestSteps.run(silent, List.of("a"), none,
                2 * SECOND, SECOND)).getMessage();
        assertTrue(why.startsWith("real guest, step a: no RG-STEP-READY line within 2 s"), why);
    }

    /** A console that gives {@code lines}, then times out. */
    private static GuestConsole console(String... lines) {
        Deque<String> q = new ArrayDeque<>(List.of(lines));
        return new GuestConsole() {
            @Override
            public String readLine(long timeoutNanos) {
                return q.poll();
            }

            @Override
            public void writeLine(String line) {
            }

            @Override
            public List<String> tail() {
                return List.of();
            }

            @Override
            public void close() {
            }
        };
    }

    // ------------------------------------------------------------------------------------------- whole run

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void theThreeSeedsRunAgainstAScriptedGuestAndTheReportHoldsTheirPointsBesideTheSimulatedOnes(@TempDir Path dir)
            throws Exception {
        List<BackendFactory> factories = List.of(new MemoryBackendFactory(), new NullBackendFactory());
        DiskRegistry registry = InProcessHost.registry(() -> factories);
        try {
            Path img = Files.createDirectories(dir.resolve("img"));
            Files.writeString(img.resolve("vmlinuz"), "kernel");
            Files.write(img.resolve("base.cpio"), Cpio.newc(Map.of("init", "RG-STEP-READY".getBytes())));
            Path qemu = executable(dir.resolve("bin/qemu-system-x86_64"));
            List<String> exported = new ArrayList<>();
            RealGuestBench.Exporter exporter = new RealGuestBench.Exporter() {
                @Override
                public void export(String disk, Path socket, int queues) {
                    exported.add("export " + disk + " " + queues);
                    registry.exportDevice(disk, queues); // the counters and locks of an export, without a front-end
                }

                @Override
                public void stop(String disk) {
                    exported.add("stop " + disk);
                }
            };
            List<List<String>> commands = new ArrayList<>();
            List<List<String>> stepLists = new ArrayList<>();
            // IOPS so that each seed's new variant wins: the scripted figures decide the verdicts.
            Map<String, Double> iops = Map.of("immediate64", 1000.0, "bh64", 1050.0, "defercall64", 1090.0,
                    "hipri0", 1000.0, "hipri1", 1200.0, "yielding", 1000.0, "mutex", 2040.0, "sharded", 1500.0);
            LockStats locks = new LockStats() {
                @Override
                public List<LockStatRow> rows() {
                    return registry.lockStats();
                }

                @Override
                public void reset() {
                    registry.resetLockStats();
                }
            };
            RealGuestBench bench = new RealGuestBench(registry, registry, locks, exporter).with(command -> {
                commands.add(command);
                Path initrd = Path.of(command.get(command.indexOf("-initrd") + 1));
                String steps = new String(Cpio.find(Files.newInputStream(initrd), "rg/steps"), StandardCharsets.UTF_8);
                stepLists.add(steps.lines().toList());
                return new ScriptedGuest(steps.lines().toList(), iops, null);
            }, "tcg");
            RealGuestReport r = bench.run(new RealGuestOptions(true, img, qemu.toString(), 1_000_000_000L, 3), Map.of());
            assertNull(r.notRun());
            assertEquals("tcg", r.accel());
            assertEquals("QEMU emulator version 7.2.0 (scripted)", r.qemu());
            assertEquals(List.of("002", "003", "004"), r.seeds().stream().map(RealGuestReport.Seed::id).toList());
            assertEquals(List.of("export bench-guest002 2", "stop bench-guest002", "export bench-guest003 2",
                    "stop bench-guest003", "export bench-guest004 2", "stop bench-guest004"), exported);
            assertTrue(registry.list().isEmpty(), "every disk detached");
            assertEquals(3, commands.size(), "one boot per seed");
            assertTrue(String.join(" ", commands.get(1)).contains("rg.blk=poll_queues=1"), "003 boots with a poll queue");
            assertTrue(String.join(" ", commands.get(0)).contains("-accel tcg,thread=multi"));

            // 002 ran no request through the scripted guest: said, with no verdict.
            // 3 rounds interleaved after one warm-up: warmup, A B C, A_2 B_2 C_2, A_3 B_3 C_3.
            assertEquals(List.of("warmup", "hipri0", "hipri1", "hipri0_2", "hipri1_2", "hipri0_3", "hipri1_3"),
                    stepLists.get(1));
            assertEquals(1 + 6 * 3, stepLists.get(0).size());
            Path firstInitrd = Path.of(commands.get(2).get(commands.get(2).indexOf("-initrd") + 1));
            assertFalse(Files.exists(firstInitrd), "the boot's work folder is removed");
            RealGuestReport.Seed s002 = r.seeds().get(0);
            assertEquals(6, s002.points().size());
            assertNull(s002.directionMatches());
            assertTrue(s002.measured().startsWith("not run: the exported device's queues did not run each strategy"));
            RealGuestReport.Seed s003 = r.seeds().get(1);
            assertEquals(List.of("hipri=0", "hipri=1"), s003.points().stream().map(SeedResult.Point::label).toList());
            assertEquals(20.0, s003.measuredFigures().get("iops_change_pct"), 1e-9);
            assertTrue(s003.directionMatches());
            assertEquals(1.0, s003.magnitudeRatio(), 1e-9);
            RealGuestReport.Seed s004 = r.seeds().get(2);
            assertEquals(2.04, s004.measuredFigures().get("mutex_vs_yielding_ratio"), 1e-9, "medians of the rounds");
            assertEquals(2040 * 0.9, s004.points().get(1).figures().get("IOPS-min"), 1e-6);
            assertEquals(2040 * 1.1, s004.points().get(1).figures().get("IOPS-max"), 1e-6);
            assertEquals("3", s004.points().get(1).params().get("rounds"));
            assertTrue(s004.directionMatches());
            assertEquals("2", s004.points().get(0).params().get("iothreads"));
            assertEquals("yielding", s004.points().get(0).params().get("tracked-lock"));

            SeedResult sim = new SeedResult("003", "t", "p", Map.of(), "r", List.of(), "simulated line 003", Map.of(),
                    true, List.of()).with(0.96, "virtual time");
            String text = RealGuestFormat.text(r, List.of(sim));
            assertTrue(text.contains("real Linux guest: QEMU emulator version 7.2.0 (scripted), accel tcg"), text);
            assertTrue(text.contains("3 round(s) of every point interleaved"), text);
            assertTrue(text.contains("  note: TCG: QEMU emulates the guest's 2 vCPUs"), text);
            assertTrue(text.contains("  simulated:  simulated line 003 [matches, 0.96x within 2x]"), text);
            assertTrue(text.contains("  real guest: hipri=1 vs hipri=0: IOPS +20.0% (1000 -> 1200)"), text);
            assertTrue(text.contains("  simulated:  not run (--real-guest-only)"), text);
            List<String> points = text.lines().filter(l -> l.contains(" | vcpus 2, ")).toList();
            assertEquals(6 + 2 + 3, points.size(), text);
            for (String p : points) {
                assertTrue(p.contains("transport vhost-user-blk-pci") && p.contains(", accel tcg |")
                        && p.contains("| IOPS ") && p.contains("irqs/req"), p);
            }

            String json = RealGuestFormat.addToJson(SeedsJson.write(List.of(sim), 1_000_000_000L, HostLoad.unmeasured(2),
                    "now"), r);
            JsonNode root = new ObjectMapper().readTree(json);
            assertEquals("003", root.get("seeds").get(0).get("id").asText(), "the simulated seeds stay");
            JsonNode rg = root.get("real_guest");
            assertTrue(rg.get("not_run").isNull());
            assertEquals("tcg", rg.get("accel").asText());
            assertEquals(3, rg.get("seeds").size());
            JsonNode j003 = rg.get("seeds").get(1);
            assertTrue(j003.get("direction_matches").asBoolean());
            assertEquals("1", j003.get("points").get(1).get("params").get("hipri").asText());
            assertEquals("tcg", j003.get("points").get(1).get("params").get("accel").asText());
            assertEquals(1200, j003.get("points").get(1).get("figures").get("IOPS").asDouble());
            assertTrue(rg.get("seeds").get(0).get("direction_matches").isNull());

            String page = RealGuestFormat.addToHtml(SeedsHtml.write(List.of(sim), 1_000_000_000L, HostLoad.unmeasured(2),
                    "now"), r, List.of(sim));
            assertTrue(page.indexOf("<h2 id=\"real-guest\">Real Linux guest</h2>") < page.indexOf("</body>"));
            assertTrue(page.contains("<h3>seed 004 on the real guest"), page);
        } finally {
            registry.close();
        }
    }

    @Test
    void aNotRunReportIsValidJsonWithItsReason() throws Exception {
        RealGuestReport r = RealGuestReport.notRun("qemu-system-x86_64 is not on the PATH", "/img", 3_000_000_000L);
        JsonNode root = new ObjectMapper().readTree(RealGuestFormat.addToJson(SeedsJson.write(List.of(), 1_000_000_000L,
                HostLoad.unmeasured(2), "now"), r));
        assertEquals("qemu-system-x86_64 is not on the PATH", root.get("real_guest").get("not_run").asText());
        assertEquals(0, root.get("real_guest").get("seeds").size());
        assertEquals("x\n\nreal guest section\nJSON: /tmp/a.json\n",
                RealGuestSeeds.withSection("x\nJSON: /tmp/a.json\n", "\nreal guest section\n"));
    }
}
