package io.kickplug.guest.bench;

import io.kickplug.api.text.JsonText;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Where a result file came from: the exact command line, the git commit the bundle was built from, the date and the
 * machine (CPU model, cores, the CPUs the process may run on, kernel, JVM, load average at the start). Written as the
 * {@code "provenance"} member of {@code kp:bench seeds --json}, in the shape {@code VhostBench --json} writes too
 * (the benchmarks module's report code reads both and draws the figures' captions from it).
 *
 * @param command the JVM's command line as typed ({@code /proc/self/cmdline}, shell-quoted)
 * @param gogoCommand the Gogo command that ran the benchmark ("kp:bench seeds --json ..."), or null
 * @param gitCommit the commit the guest bundle was built from ({@code git describe --always --dirty --abbrev=40} at
 *     build time: "-dirty" when tracked files differed from it), or "unknown (...)"
 * @param date when the run started, ISO 8601 with the offset, to the second
 * @param cpuModel the first "model name" of {@code /proc/cpuinfo}
 * @param cores the processors the JVM saw
 * @param cpusAllowed the CPUs the process may run on ({@code Cpus_allowed_list}: "0-1", or "0" under taskset)
 * @param kernel {@code /proc/sys/kernel/osrelease} and the architecture
 * @param jvm the JVM's name and runtime version
 * @param load1 the 1-minute load average at the start ({@code /proc/loadavg}; NaN when unread)
 * @param load5 the 5-minute load average at the start
 * @param load15 the 15-minute load average at the start
 */
public record Provenance(String command, String gogoCommand, String gitCommit, String date, String cpuModel,
        int cores, String cpusAllowed, String kernel, String jvm, double load1, double load5, double load15) {

    /** The bundle resource bnd writes at build time (bnd.bnd, {@code -includeresource}). */
    static final String COMMIT_RESOURCE = "build-commit.txt";

    /** The provenance of this process now, for a run of {@code gogoCommand} (null: not known). */
    public static Provenance now(String gogoCommand) {
        double[] load = readLoadAvg();
        return new Provenance(readCommandLine(), gogoCommand, readGitCommit(),
                ZonedDateTime.now().truncatedTo(ChronoUnit.SECONDS).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME),
                readCpuModel(), Runtime.getRuntime().availableProcessors(), readCpusAllowed(), readKernel(), readJvm(),
                load[0], load[1], load[2]);
    }

    /** The {@code "provenance"} object, its members on lines indented by {@code indent} plus two. */
    public String json(String indent) {
        String in = indent + "  ";
        return "{\n"
                + in + "\"command\": " + JsonText.quote(command) + ",\n"
                + in + "\"gogo_command\": " + JsonText.quote(gogoCommand) + ",\n"
                + in + "\"git_commit\": " + JsonText.quote(gitCommit) + ",\n"
                + in + "\"date\": " + JsonText.quote(date) + ",\n"
                + in + "\"machine\": {\"cpu_model\": " + JsonText.quote(cpuModel) + ", \"cores\": " + cores
                + ", \"cpus_allowed\": " + JsonText.quote(cpusAllowed) + ", \"kernel\": " + JsonText.quote(kernel)
                + ", \"jvm\": " + JsonText.quote(jvm) + ",\n"
                + in + "  \"loadavg_start\": {\"1min\": " + SeedsJson.number(load1) + ", \"5min\": "
                + SeedsJson.number(load5) + ", \"15min\": " + SeedsJson.number(load15) + "}}\n"
                + indent + "}";
    }

    /** {@code args} as one shell command line: words with characters a shell would read specially in single quotes. */
    static String shellQuote(List<String> args) {
        StringBuilder sb = new StringBuilder();
        for (String a : args) {
            if (sb.length() > 0) {
                sb.append(' ');
            }
            if (!a.isEmpty() && a.matches("[A-Za-z0-9_./=:,@%+-]+")) {
                sb.append(a);
            } else {
                sb.append('\'').append(a.replace("'", "'\\''")).append('\'');
            }
        }
        return sb.toString();
    }

    /** The command line as the process was started: {@code /proc/self/cmdline} (argv[0] as typed: "java"). */
    static String readCommandLine() {
        try {
            byte[] raw = Files.readAllBytes(Path.of("/proc/self/cmdline"));
            List<String> args = new ArrayList<>();
            int start = 0;
            for (int i = 0; i < raw.length; i++) {
                if (raw[i] == 0) {
                    args.add(new String(raw, start, i - start, StandardCharsets.UTF_8));
                    start = i + 1;
                }
            }
            if (!args.isEmpty()) {
                return shellQuote(args);
            }
        } catch (IOException | RuntimeException e) {
            // not Linux: the JDK's view below
        }
        ProcessHandle.Info info = ProcessHandle.current().info();
        List<String> args = new ArrayList<>();
        args.add(info.command().orElse("java"));
        info.arguments().ifPresent(a -> args.addAll(List.of(a)));
        return shellQuote(args);
    }

    /** The commit bnd stamped into this bundle at build time. */
    static String readGitCommit() {
        try (InputStream in = Provenance.class.getResourceAsStream(COMMIT_RESOURCE)) {
            String commit = in == null ? "" : new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            return commit.matches("[0-9a-f]{40}(-dirty)?") ? commit
                    : "unknown (no commit stamped at build: not built from a git work tree, or run from target/classes)";
        } catch (IOException e) {
            return "unknown (" + e.getMessage() + ")";
        }
    }

    static String readCpuModel() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/cpuinfo"), StandardCharsets.UTF_8)) {
                if (line.startsWith("model name")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // below
        }
        return System.getProperty("os.arch") + " (no model name in /proc/cpuinfo)";
    }

    static String readCpusAllowed() {
        try {
            for (String line : Files.readAllLines(Path.of("/proc/self/status"), StandardCharsets.UTF_8)) {
                if (line.startsWith("Cpus_allowed_list:")) {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
        } catch (IOException | RuntimeException e) {
            // below
        }
        return "unknown";
    }

    static String readKernel() {
        try {
            return Files.readString(Path.of("/proc/sys/kernel/osrelease"), StandardCharsets.UTF_8).trim() + " "
                    + System.getProperty("os.arch");
        } catch (IOException | RuntimeException e) {
            return System.getProperty("os.version") + " " + System.getProperty("os.arch");
        }
    }

    static String readJvm() {
        return System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version");
    }

    static double[] readLoadAvg() {
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg"), StandardCharsets.US_ASCII).trim().split("\\s+");
            return new double[] {Double.parseDouble(f[0]), Double.parseDouble(f[1]), Double.parseDouble(f[2])};
        } catch (IOException | RuntimeException e) {
            return new double[] {Double.NaN, Double.NaN, Double.NaN};
        }
    }

    @Override
    public String toString() {
        return String.format(Locale.ROOT, "%s @ %s, %s", command, gitCommit, date);
    }
}
