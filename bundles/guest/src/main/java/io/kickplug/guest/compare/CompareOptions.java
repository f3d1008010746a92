package io.kickplug.guest.compare;

import io.kickplug.api.command.OptionTable;
import io.kickplug.api.guest.OptionArgs;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code kp:compare DISK [--strategies LIST] [--poll LIST] [--job JOB] [--rounds N] [--json FILE] [--html FILE]}.
 *
 * @param disk the disk
 * @param strategies the strategies to compare, in run order within a round; empty: every bound one
 * @param polls the polling settings each strategy runs with; empty: the disk's polling as it is
 * @param job the fio job as given ("rw=randread bs=4k iodepth=32", fio's option names without the dashes)
 * @param jobArgs the job as kp:fio's arguments, with kp:compare's defaults for what the job leaves out
 * @param rounds rounds (each runs every strategy once)
 */
public record CompareOptions(String disk, List<String> strategies, List<Setting.Poll> polls, String job,
        List<String> jobArgs, int rounds, Path json, Path html) {

    public static final int DEFAULT_ROUNDS = 3;
    static final int MAX_ROUNDS = 25;
    /** The job when none is given: the notification strategies' usual test, random 4k reads at queue depth 32. */
    public static final String DEFAULT_JOB = "rw=randread bs=4k iodepth=32";
    /**
     * What kp:compare adds to a job that does not say: an asynchronous engine (so iodepth counts: fio's default
     * psync keeps one I/O in flight, where no strategy differs) and a time-based run of 2 s per round.
     */
    static final List<String> JOB_DEFAULTS = List.of("ioengine=libaio", "runtime=2", "time_based=1");

    public static final OptionTable TABLE = new OptionTable("DISK [options]",
            "run one fio job (kp:fio's syntax) against several notification strategies (and polling settings) on the "
                    + "same disk, in "
                    + "interleaved rounds (A B C A B C ...), and print the medians over the rounds side by side: IOPS, "
                    + "interrupts and kicks per request, completion latency p50/p99, device CPU per I/O; the disk "
                    + "goes back to its own strategies after",
            List.of(
                    OptionTable.Option.valued("--strategies", "LIST", "every bound strategy",
                            "the strategies to compare, comma-separated (see kp:strategies), run in this order in "
                                    + "every round"),
                    OptionTable.Option.valued("--poll", "LIST", "the disk's polling, unchanged",
                            "also compare device-side polling, comma-separated: off, on (the disk's poll-max-ns) or a "
                                    + "poll-max-ns in ns; each strategy runs with each (bh/off, bh/poll:100000, ...)"),
                    OptionTable.Option.valued("--job", "JOB", DEFAULT_JOB,
                            "the fio job: KEY=VALUE pairs separated by spaces (kp:fio's options without the dashes),"
                                    + " or a job file; ioengine=libaio, runtime=2 and time_based=1 unless it sets "
                                    + "them"),
                    OptionTable.Option.valued("--rounds", "N", Integer.toString(DEFAULT_ROUNDS),
                            "runs per strategy, 1 to " + MAX_ROUNDS + "; the figures are medians over them"),
                    OptionTable.Option.valued("--json", "FILE", "", "also write the samples and medians as JSON"),
                    OptionTable.Option.valued("--html", "FILE", "",
                            "also write an HTML page with a bar chart (SVG) per figure")));

    public CompareOptions {
        strategies = List.copyOf(strategies);
        polls = List.copyOf(polls);
        jobArgs = List.copyOf(jobArgs);
    }

    /** @throws IllegalArgumentException naming the bad argument */
    public static CompareOptions parse(List<String> args) {
        OptionArgs.Parsed parsed = OptionArgs.parse(args, "DISK, --strategies, --poll, --job, --rounds, --json or --html",
                Set.of());
        if (parsed.operands().size() != 1 || parsed.operands().get(0) == null || parsed.operands().get(0).isBlank()) {
            throw new IllegalArgumentException(parsed.operands().isEmpty() ? "kp:compare needs a disk: kp:compare DISK "
                    + "[--strategies LIST] [--job JOB] [--rounds N] [--json FILE] [--html FILE]"
                    : "one disk only, not " + String.join(" ", parsed.operands()));
        }
        List<String> strategies = List.of();
        List<Setting.Poll> polls = List.of();
        String job = DEFAULT_JOB;
        int rounds = DEFAULT_ROUNDS;
        Path json = null;
        Path html = null;
        for (Map.Entry<String, String> o : parsed.options().entrySet()) {
            String value = o.getValue().trim();
            switch (o.getKey()) {
                case "--strategies" -> {
                    strategies = Arrays.stream(value.split(",")).map(String::trim).filter(s -> !s.isEmpty()).toList();
                    if (strategies.isEmpty()) {
                        throw new IllegalArgumentException("--strategies needs at least one name");
                    }
                    if (strategies.stream().distinct().count() != strategies.size()) {
                        throw new IllegalArgumentException("--strategies names one twice: " + value);
                    }
                }
                case "--poll" -> {
                    polls = Arrays.stream(value.split(",")).map(String::trim).filter(p -> !p.isEmpty())
                            .map(Setting.Poll::parse).toList();
                    if (polls.isEmpty()) {
                        throw new IllegalArgumentException("--poll needs at least one of off, on or a poll-max-ns");
                    }
                    if (polls.stream().distinct().count() != polls.size()) {
                        throw new IllegalArgumentException("--poll names one twice: " + value);
                    }
                }
                case "--job" -> {
                    if (value.isEmpty()) {
                        throw new IllegalArgumentException("--job needs a job: 'rw=randread bs=4k iodepth=32'");
                    }
                    job = value;
                }
                case "--rounds" -> {
                    try {
                        rounds = Integer.parseInt(value);
                    } catch (NumberFormatException e) {
                        rounds = 0;
                    }
                    if (rounds < 1 || rounds > MAX_ROUNDS) {
                        throw new IllegalArgumentException("--rounds must be 1 to " + MAX_ROUNDS + ": " + value);
                    }
                }
                case "--json" -> json = Path.of(nonEmpty("--json", value));
                case "--html" -> html = Path.of(nonEmpty("--html", value));
                default -> throw new IllegalArgumentException("unknown option " + o.getKey() + " (kp:compare takes "
                        + "--strategies, --poll, --job, --rounds, --json and --html)");
            }
        }
        return new CompareOptions(parsed.operands().get(0).trim(), strategies, polls, job, jobArgs(job), rounds, json,
                html);
    }

    private static String nonEmpty(String option, String value) {
        if (value.isEmpty()) {
            throw new IllegalArgumentException(option + " needs a file");
        }
        return value;
    }

    /**
     * The job as kp:fio's arguments: each KEY=VALUE as --KEY=VALUE, then {@link #JOB_DEFAULTS} for the keys it does
     * not set; a job without '=' is a job file, passed as it is.
     */
    static List<String> jobArgs(String job) {
        if (!job.contains("=")) {
            return List.of(job);
        }
        List<String> out = new ArrayList<>();
        List<String> keys = new ArrayList<>();
        for (String part : job.trim().split("\\s+")) {
            String p = part.startsWith("--") ? part.substring(2) : part;
            int eq = p.indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("--job: '" + part + "' is not KEY=VALUE");
            }
            keys.add(p.substring(0, eq).toLowerCase(java.util.Locale.ROOT));
            out.add("--" + p);
        }
        for (String d : JOB_DEFAULTS) {
            String key = d.substring(0, d.indexOf('='));
            if (!keys.contains(key)) {
                out.add("--" + d);
            }
        }
        return out;
    }
}
