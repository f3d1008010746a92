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

    private RealGuestOutput() {
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
