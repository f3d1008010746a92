package io.kickplug.virtio.testkit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link RealGuestOutput#boot}: a guest whose kernel reports a stall before /init is booted once more; a guest that
 * is only slow, or whose QEMU exits, is not. The "guest" is a shell script that behaves like the harness's console
 * (its second start sees a marker file the first one left).
 */
class RealGuestBootTest {

    private Path dir;

    @BeforeEach
    void makeDir() throws Exception {
        dir = Files.createTempDirectory("kp-rgboot");
    }

    @AfterEach
    void removeDir() throws Exception {
        try (var s = Files.walk(dir)) {
            s.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
        }
    }

    /** A console: the first start prints {@code first} and hangs, later starts reach /init and finish. */
    private List<String> guest(String first) {
        Path started = dir.resolve("started");
        return List.of("bash", "-c", "if [ -f " + started + " ]; then echo 'RG-MARK init 3.1'; echo RG-DONE; "
                + "else touch " + started + "; " + first + "; exec sleep 600; fi");
    }

    @Test
    void aKernelStallBeforeInitRebootsOnce() throws Exception {
        RealGuestOutput.Boot boot = RealGuestOutput.boot("stall", guest(
                "echo '[   22.001] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:'; "
                        + "echo \"[   22.002] rcu: rcu_preempt kthread timer wakeup didn't happen for 5000 jiffies!\""),
                java.util.Map.of(), 1);
        try {
            assertEquals(2, boot.starts());
            boot.guest().finish(30);
            assertTrue(boot.guest().has("RG-DONE"), boot.guest()::text);
        } finally {
            boot.guest().process.destroyForcibly();
        }
    }

    @Test
    void aSlowGuestWithoutAStallIsLeftToTheTest() throws Exception {
        RealGuestOutput.Boot boot = RealGuestOutput.boot("slow", guest("echo 'Linux version 6.1'"), java.util.Map.of(), 1);
        try {
            assertEquals(1, boot.starts());
            assertTrue(boot.guest().process.isAlive(), "the slow guest was not killed");
            assertTrue(RealGuestOutput.stallLines(boot.guest()).isEmpty());
        } finally {
            boot.guest().process.destroyForcibly();
        }
    }

    @Test
    void aQemuThatExitedIsNotStartedAgain() throws Exception {
        // A panic with panic=-1 and -no-reboot ends QEMU: a failure the test reports, not a stall to retry.
        RealGuestOutput.Boot boot = RealGuestOutput.boot("exited", List.of("bash", "-c",
                "echo '[ 0.05] Kernel panic - not syncing: IO-APIC + timer doesn'\"'\"'t work!'; "
                        + "echo 'rcu: INFO: rcu_preempt detected stalls'; exit 1"), java.util.Map.of(), 5);
        boot.guest().finish(30);
        assertEquals(1, boot.starts());
        assertEquals(1, boot.guest().exitCode);
        assertFalse(boot.guest().has("RG-MARK init"));
    }
}
