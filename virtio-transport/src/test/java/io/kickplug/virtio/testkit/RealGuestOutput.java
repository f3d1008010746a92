package io.kickplug.virtio.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;

/**
 * Checks of what the real-guest harness ({@code bundles/vhost-user/src/test/realguest/realguest.sh}) prints on the
 * guest's console: its {@code RG-} lines. Shared by the real-guest tests of bundles/vhost-user and distribution.
 */
public final class RealGuestOutput {

    /** What the harness's /init prints first: the guest kernel finished booting. */
    public static final String INIT_MARK = "RG-MARK init";

    /** How long a guest may take to reach /init before a kernel stall counts as one (see {@link #boot}). */
    public static final long BOOT_STALL_SECONDS = 120;

    /** What the guest kernel prints when one of its CPUs or its timers stopped (RCU stall, soft lockup). */
    private static final List<String> STALL_SIGNS = List.of("detected stall", "self-detected stall",
            "timer wakeup didn't happen", "kthread starved", "soft lockup");

    private RealGuestOutput() {
    }

    /**
     * A real-guest run: the guest's output and how many times QEMU was started for it (2 after a reboot, each
     * start is one vhost-user session).
     *
     * @param guest the run that counts
     * @param starts how many QEMUs were started (1, or 2 when the first kernel stalled at boot)
     */
    public record Boot(OutputProcess guest, int starts) {
    }

    /**
     * Starts a real-guest run ({@code realguest.sh run ...}) and starts it once more if the guest kernel stalled
     * while booting: no {@link #INIT_MARK} within {@link #BOOT_STALL_SECONDS} while QEMU still runs and the kernel
     * reported a stall ({@link #STALL_SIGNS}).
     *
     * <p>Why a retry and not only a fix: under TCG the guest's clocks follow the host's real time, so when the busy
     * host leaves a vCPU thread unscheduled, the guest sees a CPU whose timer stopped ("rcu_preempt kthread timer
     * wakeup didn't happen ... Possible timer handling issue on cpu=0"), and in a CI run the kernel stayed in that
     * state for 4 minutes without reaching the virtio driver. That is QEMU's TCG timer emulation on a starved
     * host, before the guest touches the device under test; the harness removes the causes it can (kernel options,
     * one vCPU where the test needs one queue), and this catches the rest. Only the kernel's own stall report
     * triggers it: a guest that is slow but shows no stall, or a QEMU that exited, is left to the test's checks,
     * so a back-end that hangs QEMU (no guest timer runs then, so no stall is reported) still fails the test.
     */
    public static Boot boot(String name, List<String> command) throws Exception {
        return boot(name, command, java.util.Map.of(), BOOT_STALL_SECONDS);
    }

    /** {@link #boot(String, List)} with {@code env} added to the harness's environment. */
    public static Boot boot(String name, List<String> command, java.util.Map<String, String> env) throws Exception {
        return boot(name, command, env, BOOT_STALL_SECONDS);
    }

    /** {@link #boot(String, List, java.util.Map)} with the time to reach /init given ({@code stallSeconds}). */
    static Boot boot(String name, List<String> command, java.util.Map<String, String> env, long stallSeconds)
            throws Exception {
        OutputProcess first = OutputProcess.start(name, command, env);
        // awaitLine also returns at the end of the output; the process may then take a moment to be reaped.
        if (first.awaitLine(INIT_MARK, stallSeconds)
                || first.process.waitFor(1, java.util.concurrent.TimeUnit.SECONDS)) {
            return new Boot(first, 1);
        }
        List<String> stall = stallLines(first);
        if (stall.isEmpty()) {
            return new Boot(first, 1); // slow, not stalled: the test's own timeouts decide
        }
        first.process.destroyForcibly();
        first.process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS);
        System.err.println("REAL-GUEST BOOT STALL (" + name + "): no " + INIT_MARK + " after " + stallSeconds
                + " s and the guest kernel reported a stall; QEMU killed, booting the guest once more. Kernel said:\n  "
                + String.join("\n  ", stall));
        return new Boot(OutputProcess.start(name + "-reboot", command, env), 2);
    }

    /** The guest kernel's stall reports in {@code g}'s output (RCU stall, soft lockup); empty when none. */
    public static List<String> stallLines(OutputProcess g) {
        List<String> found = new java.util.ArrayList<>();
        for (String line : g.text().split("\n")) {
            if (STALL_SIGNS.stream().anyMatch(line::contains)) {
                found.add(line);
            }
        }
        return found;
    }

    /**
     * The guest ended well: QEMU exited with 0, the init script finished, saw {@code queues} virtqueues, fio exited
     * with 0 (so its verify passed) and the guest printed no error.
     */
    public static void assertFinished(OutputProcess g, int queues) {
        assertEquals(0, g.exitCode, () -> "QEMU exit status:\n" + g.text());
        assertTrue(g.has("RG-DONE"), () -> "the guest did not finish:\n" + g.text());
        assertTrue(g.has("RG-QUEUES " + queues), g::text);
        assertTrue(g.has("RG-FIO-EXIT=0"), () -> "fio failed (verify or I/O error):\n" + g.text());
        List<String> errors = g.lines("RG-KERNEL-ERROR");
        errors.addAll(g.lines("RG-ERROR"));
        assertTrue(errors.isEmpty(), () -> "guest errors " + errors + ":\n" + g.text());
    }

    /** The md5 the guest computed of the disk's first bytes ({@code RG-SUM=}). */
    public static String guestSum(OutputProcess g) {
        return g.lines("RG-SUM=").stream().findFirst().orElseThrow(() -> new AssertionError("no RG-SUM:\n" + g.text()))
                .substring("RG-SUM=".length()).trim();
    }

    /** The md5 (hex) of the first {@code bytes} of {@code file} (all of it when shorter). */
    public static String md5(Path file, long bytes) throws Exception {
        MessageDigest md = MessageDigest.getInstance("MD5");
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buf = new byte[1 << 16];
            long left = bytes;
            while (left > 0) {
                int n = in.read(buf, 0, (int) Math.min(buf.length, left));
                if (n < 0) {
                    break;
                }
                md.update(buf, 0, n);
                left -= n;
            }
        }
        return HexFormat.of().formatHex(md.digest());
    }
}
