package io.kickplug.benchmarks.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Where a result file came from: the exact command line, the git commit, the date and the machine (CPU model,
 * cores, the CPUs the process may run on, kernel, JVM, load average at the start). Written as the
 * {@code "provenance"} member of a result file; the figures' captions read it back. The same shape as the seeds'
 * file ({@code kp:bench seeds --json}, written by the guest bundle), which {@link Figures} checks on reading.
 *
 * @param command the process's command line as typed ({@code /proc/self/cmdline}, shell-quoted)
 * @param gitCommit the commit ({@code git describe --always --dirty --abbrev=40}: "-dirty" when tracked files
 *     differ from it), or "unknown (...)"
 * @param date when the run started, ISO 8601 with the offset, to the second
 * @param cpuModel the first "model name" of {@code /proc/cpuinfo}
 * @param cores the processors the JVM saw
 * @param cpusAllowed the CPUs the process may run on ({@code Cpus_allowed_list}: "0-1", or "0" under taskset)
 * @param kernel {@code /proc/sys/kernel/osrelease} (or os.version)
 * @param jvm the JVM's name and runtime version
 * @param load1 the 1-minute load average at the start ({@code /proc/loadavg}; NaN when unread)
 * @param load5 the 5-minute load average at the start
 * @param load15 the 15-minute load average at the start
 */
public record Provenance(String command, String gitCommit, String date, String cpuModel, int cores,
        String cpusAllowed, String kernel, String jvm, double load1, double load5, double load15) {

    /** The provenance of this process now; {@code repo} is where git is asked for the commit. */
    public static Provenance ofThisProcess(Path repo) {
        double[] load = readLoadAvg();
        return new Provenance(readCommandLine(), readGitCommit(repo),
                ZonedDateTime.now().truncatedTo(ChronoUnit.SECONDS).format(DateTimeFormatter.ISO_OFFSET_DATE_TIME),
                readCpuModel(), Runtime.getRuntime().availableProcessors(), readCpusAllowed(), readKernel(), readJvm(),
                load[0], load[1], load[2]);
    }

    /** The {@code "provenance"} object, its members on lines indented by {@code indent} plus two. */
    public String json(String indent) {
        String in = indent + "  ";
        return "{\n"
                + in + "\"command\": " + Json.quote(command) + ",\n"
                + in + "\"git_commit\": " + Json.quote(gitCommit) + ",\n"
                + in + "\"date\": " + Json.quote(date) + ",\n"
                + in + "\"machine\": {\"cpu_model\": " + Json.quote(cpuModel) + ", \"cores\": " + cores
                + ", \"cpus_allowed\": " + Json.quote(cpusAllowed) + ", \"kernel\": " + Json.quote(kernel)
                + ", \"jvm\": " + Json.quote(jvm) + ",\n"
                + in + "  \"loadavg_start\": {\"1min\": " + Json.number(load1) + ", \"5min\": "
                + Json.number(load5) + ", \"15min\": " + Json.number(load15) + "}}\n"
                + indent + "}";
    }

    /** The provenance in a result file's {@code "provenance"} member. */
    public static Provenance of(Json.Value p) {
        Json.Value m = p.get("machine");
        Json.Value l = m.get("loadavg_start");
        return new Provenance(p.get("command").string(), p.get("git_commit").string(), p.get("date").string(),
                m.get("cpu_model").string(), (int) m.get("cores").integer(), m.get("cpus_allowed").string(),
                m.get("kernel").string(), m.get("jvm").string(),
                l.get("1min").number(), l.get("5min").number(), l.get("15min").number());
    }

    /** One line about the machine for a caption. */
    public String machineLine() {
        String load = Double.isNaN(load1) ? "load average not read" : String.format(Locale.ROOT,
                "load average %.2f / %.2f / %.2f (1/5/15 min) at the start", load1, load5, load15);
        return cpuModel + ", " + cores + " cores (process on CPUs " + cpusAllowed + "), Linux " + kernel + ", " + jvm
                + "; " + load;
    }

    /** {@code args} as one shell command line: words with characters a shell would read specially in single quotes. */
    public static String shellQuote(List<String> args) {
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

    /** The commit checked out in {@code repo}, "-dirty" appended when tracked files differ from it. */
    static String readGitCommit(Path repo) {
        try {
            Process p = new ProcessBuilder("git", "-C", repo.toString(), "describe", "--always", "--dirty",
                    "--abbrev=40", "--exclude=*").redirectErrorStream(true).start();
            String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
            if (!p.waitFor(30, TimeUnit.SECONDS)) {
                p.destroyForcibly();
                return "unknown (git did not answer)";
            }
            return p.exitValue() == 0 && out.matches("[0-9a-f]{40}(-dirty)?") ? out : "unknown (not a git work tree: "
                    + repo.toAbsolutePath().normalize() + ")";
        } catch (IOException e) {
            return "unknown (no git: " + e.getMessage() + ")";
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return "unknown (interrupted)";
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
}
