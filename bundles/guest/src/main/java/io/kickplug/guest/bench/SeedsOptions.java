package io.kickplug.guest.bench;

import io.kickplug.guest.engine.Charging;
import io.kickplug.api.command.OptionTable;
import io.kickplug.api.guest.OptionArgs;
import io.kickplug.guest.engine.CpuPinning;
import io.kickplug.guest.engine.VirtualTime;
import io.kickplug.guest.fio.FioValues;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Set;

/**
 * @param runtimeNanos each measured point's runtime
 * @param json where to write the JSON result, or {@code null} for a new file in the temporary directory
 * @param charging what virtual time charges in every seed ({@code --charging measured|model}), or {@code null}
 *     ({@code --charging auto}, the default): each seed's own ({@link #chargingOf})
 * @param only the seeds to run ({@link #SEEDS} by default), in the order of {@link #SEEDS}
 * @param rounds how many times each configuration of a comparison runs, interleaved with the others, each round
 *     for {@code runtimeNanos / rounds}; the round with the median IOPS stands for the configuration
 * @param pin where virtual time's actor threads run: {@link #AUTO} (the last CPU the process may use),
 *     {@link #OFF}, or a Linux CPU list ("1", "2-3")
 * @param quick {@code --quick}: a first look ({@link #QUICK_RUNTIME_NANOS} and {@link #QUICK_ROUNDS} unless given, and
 *     only the configurations the verdicts compare: seed 000 at its largest exit with ioeventfd off, seed 002's
 *     immediate and defer-call at iodepth 64, seed 004's yielding and mutex locks; see {@link SeedPlan}); every
 *     verdict of the report is marked quick
 * @param runtimeGiven whether {@code --runtime} was given: without it a seed under model charging runs
 *     {@link #MODEL_ROUND_NANOS} per round ({@link #runtimeOf})
 */
public record SeedsOptions(long runtimeNanos, Path json, String clock, Charging charging, long seed,
        Path html, Set<String> only, int rounds, String pin, boolean quick, boolean runtimeGiven) {

    /** The seed ids, in the order they run. */
    public static final List<String> SEEDS = List.of("000", "001", "002", "003", "004");

    public static final String AUTO = "auto";
    public static final String REAL = "real";
    public static final String VIRTUAL = "virtual";
    public static final String OFF = "off";
    public static final long DEFAULT_SEED = 1;
    /** Rounds per configuration by default: a median of three outvotes one slow spell of the host or the JIT. */
    public static final int DEFAULT_ROUNDS = 3;
    static final int MAX_ROUNDS = 15;
    /**
     * {@code --quick}'s runtime per point unless {@code --runtime} is given, shared by its {@link #QUICK_ROUNDS}
     * rounds: with seed 004's points at 60-115 wall seconds per runtime second ({@link SeedCosts}), what fits in
     * 2-3 minutes on a 2-core machine.
     */
    public static final long QUICK_RUNTIME_MS = 200;
    public static final long QUICK_RUNTIME_NANOS = QUICK_RUNTIME_MS * 1_000_000L;
    /**
     * {@code --quick}'s rounds unless {@code --rounds} is given: two, interleaved, the lower IOPS of the two stands
     * for a configuration's point and the verdict reads both rounds' effects ({@link SeedSpread}) (one round alone gave seed 002 +131% to +1005% in three runs on the loaded machine).
     */
    public static final int QUICK_ROUNDS = 2;

    public SeedsOptions {
        if (runtimeNanos <= 0) {
            throw new IllegalArgumentException("--runtime must be positive");
        }
        Objects.requireNonNull(clock, "clock");
        if (!List.of(AUTO, REAL, VIRTUAL).contains(clock)) {
            throw new IllegalArgumentException("--clock must be auto, real or virtual: " + clock);
        }
        only = Set.copyOf(Objects.requireNonNull(only, "only"));
        if (only.isEmpty() || !SEEDS.containsAll(only)) {
            throw new IllegalArgumentException("--only takes seed ids among " + String.join(",", SEEDS) + ": " + only);
        }
        if (rounds < 1 || rounds > MAX_ROUNDS) {
            throw new IllegalArgumentException("--rounds must be 1 to " + MAX_ROUNDS + ": " + rounds);
        }
        Objects.requireNonNull(pin, "pin");
        if (!pin.equals(AUTO) && !pin.equals(OFF)) {
            try {
                CpuPinning.parseList(pin);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("--pin-cpu must be auto, off or a CPU list (1, 2-3): " + e.getMessage());
            }
        }
    }

    /**
     * The CPU list virtual time pins its actors to, or null: none (off, or where a thread cannot be pinned: no
     * procfs or no taskset, or no CPU left for the other threads). Tries taskset once.
     */
    public String pinCpus() {
        if (pin.equals(OFF) || !CpuPinning.works()) {
            return null;
        }
        String cpus = pin;
        if (pin.equals(AUTO)) {
            int last = CpuPinning.lastAllowedCpu();
            cpus = last < 0 ? null : Integer.toString(last);
        }
        return cpus != null && CpuPinning.leavesOthers(cpus) ? cpus : null;
    }

    /** With the runtime given ({@code runtimeNanos} for every seed). */
    public SeedsOptions(long runtimeNanos, Path json, String clock, Charging charging, long seed,
            Path html, Set<String> only, int rounds, String pin, boolean quick) {
        this(runtimeNanos, json, clock, charging, seed, html, only, rounds, pin, quick, true);
    }

    /** A full run (not {@code --quick}). */
    public SeedsOptions(long runtimeNanos, Path json, String clock, Charging charging, long seed,
            Path html, Set<String> only, int rounds, String pin) {
        this(runtimeNanos, json, clock, charging, seed, html, only, rounds, pin, false);
    }

    /**
     * A round's runtime of a seed under model charging in a full run without {@code --runtime}: the rounds differ only
     * in their tie-break seed, and nothing of the host enters, so a round needs the I/Os that make its ratios settle
     * (tens of thousands), not the seconds that average a measured host's noise; every modelled cost is a hand-over
     * between threads, which makes a model run's wall time its virtual time times 50-150 on a 2-core machine.
     */
    public static final long MODEL_ROUND_NANOS = 100_000_000L;

    /**
     * Whether seed {@code id} runs under model charging in virtual time (unless {@code --clock auto} finds free cores
     * for real threads): its charging is the model's ({@link #chargingOf}; seed 001's always, in virtual time).
     */
    public boolean modelled(String id) {
        return !clock.equals(REAL) && (id.equals("001") || chargingOf(id) == Charging.MODEL);
    }

    /**
     * Seed {@code id}'s runtime per point: {@code --runtime} (or {@code --quick}'s), or for a seed under model charging
     * in a full run without {@code --runtime} {@link #MODEL_ROUND_NANOS} per round.
     */
    public long runtimeOf(String id) {
        return !runtimeGiven && !quick && modelled(id) ? MODEL_ROUND_NANOS * rounds : runtimeNanos;
    }

    /** Without {@code --only}: all five seeds. */
    public SeedsOptions(long runtimeNanos, Path json, String clock, Charging charging, long seed,
            Path html) {
        this(runtimeNanos, json, clock, charging, seed, html, Set.copyOf(SEEDS), DEFAULT_ROUNDS, AUTO);
    }

    /**
     * The seeds whose verdict runs under model charging by default ({@code --charging auto}): all five. Their
     * magnitude is a modelled cost (an exit, an interrupt, the tracked lock's critical section and hand-off) against
     * the request's path, which measured charging takes from the host's speed and load of the moment. Why, seed by
     * seed: docs/seeds.md, "What sets each seed's magnitude".
     */
    public static final Set<String> MODEL_CHARGING_SEEDS = Set.of("000", "001", "002", "003", "004");

    /** What virtual time charges in seed {@code id}: {@code --charging}, or (auto) the seed's own. */
    public Charging chargingOf(String id) {
        if (charging != null) {
            return charging;
        }
        return MODEL_CHARGING_SEEDS.contains(id) ? Charging.MODEL : Charging.MEASURED;
    }

    /** Why seed {@code id} charges as {@link #chargingOf} says, for its clock line. */
    String chargingReason(String id) {
        return charging != null ? "--charging " + charging.label() : "the seed's charging (--charging auto)";
    }

    /** Whether seed {@code id} runs. */
    public boolean runs(String id) {
        return only.contains(id);
    }

    /** Real or virtual time as each seed's vCPU count and the host's free cores say; each seed's charging. */
    public SeedsOptions(long runtimeNanos, Path json) {
        this(runtimeNanos, json, AUTO, null, DEFAULT_SEED, null);
    }

    /**
     * Parses {@code [--quick] [--runtime S] [--json FILE] [--html FILE] [--clock C] [--charging C] [--seed N]
     * [--only LIST] [--rounds N] [--pin-cpu auto|off|LIST]}, each as "--name value" or "--name=value"; the runtime
     * in seconds (decimals allowed: 0.2) or with fio's suffixes (200ms). {@code --quick} sets the runtime and the
     * rounds that are not given explicitly.
     *
     * @throws IllegalArgumentException with one line naming the bad argument
     */
    public static SeedsOptions parse(List<String> args) {
        boolean quick = false;
        long runtime = SeedsBench.DEFAULT_RUNTIME_NANOS;
        Path json = null;
        Path html = null;
        String clock = AUTO;
        Charging charging = null;
        long seed = DEFAULT_SEED;
        Set<String> only = Set.copyOf(SEEDS);
        int rounds = DEFAULT_ROUNDS;
        String pin = AUTO;
        OptionArgs.Parsed parsed = OptionArgs.parse(args, TABLE.expected(), TABLE.flags());
        if (!parsed.operands().isEmpty()) {
            throw new IllegalArgumentException("unexpected argument '" + parsed.operands().get(0) + "' (expected "
                    + TABLE.expected() + ")");
        }
        for (Map.Entry<String, String> option : parsed.options().entrySet()) {
            String name = option.getKey();
            String value = option.getValue() == null ? "" : option.getValue().trim();
            if (!TABLE.has(name)) {
                throw TABLE.unknown(name);
            }
            switch (name) {
                case "--quick" -> {
                    if (!value.equals("true")) {
                        throw new IllegalArgumentException("--quick takes no value: '" + value + "'");
                    }
                    quick = true;
                }
                case "--runtime" -> runtime = runtime(value);
                case "--json" -> json = file("--json", value);
                case "--html" -> html = file("--html", value);
                case "--clock" -> {
                    if (!List.of(AUTO, REAL, VIRTUAL).contains(value)) {
                        throw new IllegalArgumentException("--clock must be auto, real or virtual: '" + value + "'");
                    }
                    clock = value;
                }
                case "--charging" -> {
                    try {
                        charging = value.equals(AUTO) ? null : Charging.parse(value);
                    } catch (IllegalArgumentException e) {
                        throw new IllegalArgumentException("--charging must be auto, measured or model: '" + value
                                + "'");
                    }
                }
                case "--seed" -> {
                    try {
                        seed = Long.parseLong(value);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--seed must be an integer: '" + value + "'");
                    }
                }
                case "--only" -> only = only(value);
                case "--rounds" -> {
                    try {
                        rounds = Integer.parseInt(value);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--rounds must be an integer: '" + value + "'");
                    }
                }
                case "--pin-cpu" -> pin = value;
                default -> throw TABLE.unknown(name);
            }
        }
        // Explicit options win over --quick's.
        runtime = quick && !parsed.options().containsKey("--runtime") ? QUICK_RUNTIME_NANOS : runtime;
        rounds = quick && !parsed.options().containsKey("--rounds") ? QUICK_ROUNDS : rounds;
        return new SeedsOptions(runtime, json, clock, charging, seed, html, only, rounds, pin, quick,
                parsed.options().containsKey("--runtime"));
    }

    /** "002", "2,4", "000,003": seed ids or their numbers, comma-separated. */
    static Set<String> only(String value) {
        Set<String> ids = new java.util.LinkedHashSet<>();
        for (String part : value.split(",", -1)) {
            String p = part.trim();
            if (!p.matches("\\d{1,3}")) {
                throw new IllegalArgumentException("--only takes seed ids (000-004), comma-separated: '" + value + "'");
            }
            String id = String.format(Locale.ROOT, "%03d", Integer.parseInt(p));
            if (!SEEDS.contains(id)) {
                throw new IllegalArgumentException("--only: no seed " + id + " (seeds are " + String.join(", ", SEEDS)
                        + ")");
            }
            ids.add(id);
        }
        return ids;
    }

    private static Path file(String option, String value) {
        if (value.isBlank()) {
            throw new IllegalArgumentException(option + " needs a file name");
        }
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("invalid " + option + " '" + value + "': " + e.getReason());
        }
    }

    /** "3", "0.2" (seconds), or fio's "200ms", "1s". At most an hour. */
    static long runtime(String value) {
        String v = value == null ? "" : value.trim();
        long nanos;
        if (v.matches("\\d{1,6}\\.\\d{1,9}")) {
            nanos = Math.round(Double.parseDouble(v) * 1e9);
        } else {
            nanos = FioValues.timeNanos("--runtime", v);
        }
        if (nanos <= 0 || nanos > 3_600_000_000_000L) {
            throw new IllegalArgumentException("--runtime must be positive and at most 1h: " + value);
        }
        return nanos;
    }

    /**
     * The options {@link #parse} takes (the real-guest ones are {@link RealGuestOptions#TABLE}): the parser refuses
     * any other, and the command reference lists these.
     */
    public static final OptionTable TABLE = new OptionTable("seeds [options]", "the five seed experiments side by "
            + "side in the simulated guest: each published figure beside the measured one, with direction and "
            + "within-2x verdicts, as text, JSON and HTML",
            OptionTable.Option.flag("--quick", "a first look: only what the verdicts compare (000 at 50 us with "
                    + "ioeventfd off, 001, 002 immediate and defer-call at iodepth 64, 003, 004 yielding and mutex), "
                    + QUICK_RUNTIME_MS + " ms each in " + QUICK_ROUNDS + " rounds, every verdict marked quick; "
                    + "--runtime or --rounds given with it win"),
            OptionTable.Option.valued("--runtime", "S", SeedsBench.DEFAULT_RUNTIME_NANOS / 1_000_000_000L + "s",
                    "runtime of each measured point: seconds (0.2) or with fio's suffixes (200ms); at most 1h;"
                    + " not given, a seed under model charging runs " + MODEL_ROUND_NANOS / 1_000_000 + " ms per round"),
            OptionTable.Option.valued("--json", "FILE", "kickplug-seeds-TIME.json in the temporary folder",
                    "where to write the JSON result"),
            OptionTable.Option.valued("--html", "FILE", "", "also write the report as one HTML page"),
            OptionTable.Option.valued("--clock", "auto|real|virtual", AUTO, "real or virtual time; auto: as each "
                    + "seed's vCPU count and the host's free cores say"),
            OptionTable.Option.valued("--charging", "auto|measured|model", AUTO, "what virtual time charges: the "
                    + "measured CPU time of the code that ran plus the hardware model, or only the model "
                    + "(deterministic, no warm-ups); auto: model for every seed"),
            OptionTable.Option.valued("--seed", "N", Long.toString(DEFAULT_SEED), "seed of virtual time's tie "
                    + "breaks between threads due at the same time"),
            OptionTable.Option.valued("--only", "LIST", String.join(",", SEEDS), "the seeds to run: ids or "
                    + "numbers, comma-separated (002, or 2,4)"),
            OptionTable.Option.valued("--rounds", "N", Integer.toString(DEFAULT_ROUNDS), "runs of each "
                    + "configuration, interleaved with the others; the median counts (1 to " + MAX_ROUNDS + ")"),
            OptionTable.Option.valued("--pin-cpu", "auto|off|LIST", AUTO, "where virtual time's threads run: auto "
                    + "(the last CPU the process may use), off, or a CPU list (1, 2-3)"));
}
