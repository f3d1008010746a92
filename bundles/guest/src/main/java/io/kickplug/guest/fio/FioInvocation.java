package io.kickplug.guest.fio;

import io.kickplug.api.command.OptionTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What {@code kp:fio <disk> ...} was asked to do: the jobs (from a job file or from command-line options)
 * and the output format.
 *
 * <p>Command-line job options look like fio's: {@code --rw=randread --bs=4k}. Options before the first
 * {@code --name=} are defaults for every job (like [global]); each {@code --name=} starts a job whose
 * options follow it. Without any {@code --name=}, the options make one job named "fio". A job file is
 * given as one argument without a leading "--", and then no job options may be given on the command line.
 *
 * @param jobFile the job file path, or {@code null}
 * @param html where {@code --html=FILE} asks for the HTML report (latency percentiles, IOPS over time), or
 *     {@code null}
 */
public record FioInvocation(List<JobSpec> jobs, OutputFormat format, String jobFile, String html) {

    public enum OutputFormat {
        NORMAL, JSON
    }

    /**
     * kp:fio's own options (the others are job options, {@link JobOptions#TABLE}): {@link #parse} takes these out
     * before the job options, and the command reference lists them.
     */
    public static final OptionTable TABLE = new OptionTable("DISK JOBFILE [--output-format=F] [--html=FILE]",
            "run the jobs of a fio job file (INI: [global] and one section per job) on the disk, or the jobs given "
            + "as options (next form); the options are written --KEY=VALUE, as fio's",
            OptionTable.Option.valued("--output-format", "normal|json", "normal", "fio's text or fio's JSON "
                    + "(plus a \"kickplug\" object: the guest settings and counters)"),
            OptionTable.Option.valued("--html", "FILE", "", "also write one self-contained HTML page: each job's "
                    + "completion-latency percentiles and IOPS over time"));

    public FioInvocation {
        jobs = List.copyOf(jobs);
    }

    public FioInvocation(List<JobSpec> jobs, OutputFormat format, String jobFile) {
        this(jobs, format, jobFile, null);
    }

    /** Parses the arguments after the disk name; {@code readFile} turns a job file path into its text. */
    public static FioInvocation parse(List<String> args, java.util.function.Function<String, String> readFile) {
        OutputFormat format = OutputFormat.NORMAL;
        String jobFile = null;
        String html = null;
        JobOptions global = new JobOptions();
        List<JobOptions> jobs = new ArrayList<>();
        boolean anyJobOption = false;
        for (String arg : args) {
            if (arg == null || arg.isBlank()) {
                continue;
            }
            if (!arg.startsWith("--")) {
                if (jobFile != null) {
                    throw new FioOptionException("more than one job file: '" + jobFile + "' and '" + arg + "'");
                }
                jobFile = arg;
                continue;
            }
            String body = arg.substring(2);
            int eq = body.indexOf('=');
            String key = (eq < 0 ? body : body.substring(0, eq)).toLowerCase(Locale.ROOT);
            String value = eq < 0 ? null : body.substring(eq + 1);
            if (TABLE.has("--" + key)) {
                if (key.equals("output-format")) {
                    format = switch (value == null ? "" : value.trim().toLowerCase(Locale.ROOT)) {
                        case "normal" -> OutputFormat.NORMAL;
                        case "json" -> OutputFormat.JSON;
                        default -> throw new FioOptionException("invalid --output-format=" + value
                                + ": expected normal or json");
                    };
                } else if (value == null || value.isBlank()) {
                    throw new FioOptionException("--html needs a file: --html=FILE");
                } else {
                    html = value.trim();
                }
                continue;
            }
            anyJobOption = true;
            if (key.equals("name")) {
                jobs.add(global.copy().set("name", value));
            } else if (jobs.isEmpty()) {
                global.set(key, value);
            } else {
                jobs.get(jobs.size() - 1).set(key, value);
            }
        }
        if (jobFile != null) {
            if (anyJobOption) {
                throw new FioOptionException("job options on the command line cannot be combined with job file '"
                        + jobFile + "'; put them in the file");
            }
            return new FioInvocation(JobFileParser.parse(readFile.apply(jobFile)), format, jobFile, html);
        }
        if (!anyJobOption) {
            throw new FioOptionException("no job: give a job file or job options such as --rw=randread --bs=4k");
        }
        if (jobs.isEmpty()) {
            jobs.add(global);
        }
        List<JobSpec> specs = new ArrayList<>();
        for (JobOptions job : jobs) {
            specs.addAll(job.expand("fio", specs.size()));
        }
        return new FioInvocation(specs, format, null, html);
    }
}
