package io.kickplug.stress;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * Runs the jcstress tests of this module (the four of {@link HandshakeRaces}) with jcstress's own runner in a
 * child JVM and fails when one of them saw a forbidden outcome (a lost notification) or did not run. The mode comes from
 * {@code -Dkickplug.jcstress.mode}: {@code ci} by default (jcstress's quick mode in one JVM configuration,
 * about two minutes), or a jcstress mode ({@code sanity}, {@code quick}, {@code default}, {@code tough},
 * {@code stress}) run in every JVM configuration jcstress detects. The HTML report goes to
 * {@code stress/target/jcstress}.
 */
class JcstressHandshakeTest {

    private static final List<String> TESTS = List.of("HandshakeRaces.AvailEventIdx", "HandshakeRaces.AvailFlags",
            "HandshakeRaces.UsedEventIdx", "HandshakeRaces.UsedFlags");
    /** jcstress's last progress line: every planned run passed, none failed or errored. */
    private static final Pattern RESULTS = Pattern.compile("\\(Results: (\\d+) planned; (\\d+) passed, (\\d+) failed,"
            + " (\\d+) soft errs, (\\d+) hard errs\\)");

    @Test
    void noForbiddenOutcomeInAnyHandshakeTest() throws Exception {
        String mode = System.getProperty("kickplug.jcstress.mode", "ci");
        Path target = Path.of("target").toAbsolutePath();
        Path report = target.resolve("jcstress");
        if (Files.isDirectory(report)) {
            try (var files = Files.list(report)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Files.delete(f);
                }
            }
        }
        Files.createDirectories(report);
        Path log = target.resolve("jcstress-" + mode + ".log");
        List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java")
                .toString(), "-cp", System.getProperty("java.class.path"), "org.openjdk.jcstress.Main",
                "-t", "io\\.kickplug\\.stress\\..*Handshake.*", "-r", report.toString()));
        if (mode.equals("ci")) {
            // One JVM configuration, both actors compiled alike: about 30 s per test. It still finds a missing
            // fence: without SplitDeviceQueue.enableNotification's fullFence it reported 2 and 17 forbidden
            // outcomes in ~200,000 samples per avail-side test.
            command.addAll(List.of("-m", "quick", "-jvmArgs", "-Xmx256m", "-sc", "false"));
        } else {
            command.addAll(List.of("-m", mode)); // every JVM configuration jcstress detects
        }
        Process p = new ProcessBuilder(command).directory(target.toFile()).redirectErrorStream(true)
                .redirectOutput(log.toFile()).start();
        if (!p.waitFor(30, TimeUnit.MINUTES)) {
            p.destroyForcibly();
            throw new AssertionError("jcstress did not finish in 30 minutes; see " + log);
        }
        String out = Files.readString(log, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), "jcstress exit status; see " + log);
        Matcher m = RESULTS.matcher(out);
        String last = null;
        while (m.find()) {
            last = m.group();
        }
        assertTrue(last != null, "jcstress printed no results; see " + log);
        m = RESULTS.matcher(last);
        assertTrue(m.matches() && Integer.parseInt(m.group(1)) > 0 && m.group(1).equals(m.group(2))
                && m.group(3).equals("0") && m.group(4).equals("0") && m.group(5).equals("0"),
                "jcstress: " + last + " (a forbidden outcome is a lost notification); see " + log + " and " + report);
        assertTrue(out.contains("Failed tests: No matches.") && out.contains("Error tests: No matches."),
                "jcstress lists failed or error tests; see " + log);
        for (String test : TESTS) {
            assertTrue(Files.exists(report.resolve("io.kickplug.stress." + test + ".html")), test + " did not run;"
                    + " see " + log);
        }
        System.out.println("jcstress (" + mode + "): " + last + " for " + TESTS);
    }
}
