package io.kickplug.benchmarks.vhost;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * {@code scripts/footprint.sh} as docs/service.md runs it, shortened: one start of the built {@code kickplugd}, one
 * second idle and one second of QD64 load, qemu-storage-daemon left out. Its medians line must carry every figure.
 */
class VhostFootprintTest {

    private static final Path KICKPLUGD = Path.of("../distribution/target/kickplugd");

    @Test
    void oneStartOfKickplugdPrintsReadyMemoryThreadsAndCpuPerIo() throws Exception {
        assumeTrue(Files.isRegularFile(KICKPLUGD), "needs the distribution built before this module (mvn verify does)");
        ByteArrayOutputStream buffer = new ByteArrayOutputStream();
        PrintStream out = System.out;
        System.setOut(new PrintStream(buffer, true, StandardCharsets.UTF_8));
        try {
            VhostFootprint.main(new String[] {"--kickplugd", KICKPLUGD.toString(), "--jar",
                    "../distribution/target/kickplug.jar", "--qsd", "/nonexistent", "--starts", "1", "--idle", "1",
                    "--load", "1"});
        } finally {
            System.setOut(out);
        }
        String printed = buffer.toString(StandardCharsets.UTF_8);
        System.out.print(printed);
        // server, ready ms, cpu ms, RSS idle, RSS load, after, threads, threads under load, IOPS, CPU/IO
        Matcher m = Pattern.compile("(?m)^kickplugd +(\\d+) +(\\d+) +([\\d.]+) +([\\d.]+) +([\\d.]+) +(\\d+) +(\\d+)"
                + " +(\\d+) +([\\d.]+)$").matcher(printed.substring(printed.indexOf("Medians of 1 starts")));
        assertTrue(m.find(), "no medians line for kickplugd in:\n" + printed);
        assertTrue(Long.parseLong(m.group(1)) > 0, "ready ms");
        assertTrue(Double.parseDouble(m.group(3)) > 10, "RSS idle in MiB");
        assertTrue(Integer.parseInt(m.group(6)) > 2, "threads idle");
        assertTrue(Long.parseLong(m.group(8)) > 0, "IOPS under load");
        assertTrue(Double.parseDouble(m.group(9)) > 0, "CPU per I/O");
        assertTrue(printed.contains("kickplugd's threads when idle"), printed);
    }
}
