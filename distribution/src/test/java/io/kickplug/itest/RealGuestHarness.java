package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import io.kickplug.virtio.testkit.OutputProcess;
import io.kickplug.virtio.testkit.RealGuestOutput;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The real-guest harness of the vhost-user module (bundles/vhost-user/src/test/realguest/realguest.sh) and its
 * cache (kernel, initramfs), found beside the built launcher jar.
 *
 * @param dir the harness folder (realguest.sh, jobs/)
 * @param cache the harness's cache folder
 */
record RealGuestHarness(Path dir, Path cache) {

    /** The harness of the module tree {@code jar} (…/distribution/target/kickplug.jar) was built in. */
    static RealGuestHarness besideJar(Path jar) {
        Path vhostModule = jar.getParent().getParent().resolveSibling("bundles").resolve("vhost-user");
        return new RealGuestHarness(vhostModule.resolve("src/test/realguest"), vhostModule.resolve("target/realguest"));
    }

    /** The command line of {@code realguest.sh ARGS...}. */
    List<String> command(String... args) {
        List<String> command = new java.util.ArrayList<>(List.of("bash", dir.resolve("realguest.sh").toString()));
        command.addAll(List.of(args));
        return command;
    }

    /**
     * Runs {@code realguest.sh prepare} (packages, kernel, initramfs; up to 20 minutes the first time); fails the
     * test with the harness's output when it could not.
     */
    void prepare(String name) throws Exception {
        OutputProcess prep = OutputProcess.start(name, command("prepare", cache.toString()));
        prep.finish(1200);
        if (prep.exitCode != 0 || !prep.has("RG-PREPARED")) {
            fail("the real-guest harness could not prepare (packages, kernel, initramfs); CI runs as root with apt:\n"
                    + prep.text());
        }
    }

    /**
     * The command line of a guest run of jobs/crash-verify.fio on the vhost-user disk at {@code socket}: two
     * queues, EVENT_IDX on, 500 passes over {@code sumMb} MiB, then the options {@code more}.
     */
    List<String> crashVerifyRun(Path socket, int sumMb, String... more) {
        List<String> command = command("run", cache.toString(), socket.toString(),
                dir.resolve("jobs/crash-verify.fio").toString(), "--queues", "2", "--event-idx", "on", "--sum-mb",
                Integer.toString(sumMb), "--passes", "500");
        command.addAll(List.of(more));
        return command;
    }

    /**
     * Checks a finished crash-verify run: QEMU exited 0, the guest finished, no fio pass failed (verify or I/O
     * error), the guest's kernel and harness logged no error, and the first {@code sumMb} MiB of {@code image}
     * hold what the guest wrote (its md5). {@code report} is what a failure shows.
     */
    static void assertVerifiedRun(OutputProcess guest, Path image, int sumMb, String report) throws Exception {
        assertEquals(0, guest.exitCode, () -> "QEMU exit status:\n" + report);
        assertTrue(guest.has("RG-DONE"), () -> "the guest did not finish:\n" + report);
        assertTrue(guest.has("RG-FIO-EXIT=0"), () -> "a fio pass failed (verify or I/O error):\n" + report);
        List<String> failed = guest.lines("RG-PASS").stream().filter(l -> !l.endsWith("exit=0")).toList();
        assertTrue(failed.isEmpty(), () -> "failed passes " + failed + ":\n" + report);
        List<String> errors = guest.lines("RG-KERNEL-ERROR");
        errors.addAll(guest.lines("RG-ERROR"));
        assertTrue(errors.isEmpty(), () -> "guest errors " + errors + ":\n" + report);
        String guestSum = guest.lines("RG-SUM=").stream().findFirst()
                .orElseThrow(() -> new AssertionError(report)).substring("RG-SUM=".length()).trim();
        assertEquals(RealGuestOutput.md5(image, sumMb << 20), guestSum,
                "the image holds what the guest wrote (md5 of the first " + sumMb + " MiB)");
    }

    /** Kills {@code process} if there is one and waits up to 30 s for it to end (an IT's clean-up). */
    static void stop(Process process) throws InterruptedException {
        if (process != null) {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    /** Deletes the folder {@code work} with all it holds, if there is one (an IT's clean-up). */
    static void deleteTree(Path work) throws IOException {
        if (work != null) {
            try (Stream<Path> s = Files.walk(work)) {
                s.sorted(Collections.reverseOrder()).forEach(p -> p.toFile().delete());
            }
        }
    }

    /** A sparse disk image of {@code bytes} at {@code file}. */
    static Path sparseImage(Path file, long bytes) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.setLength(bytes);
        }
        return file;
    }
}
