package io.kickplug.guest.bench;

import io.kickplug.api.command.OptionTable;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The real-guest options of {@code kp:bench seeds}: {@code --real-guest} (also run seeds 002, 003 and 004 on a
 * Linux guest in QEMU over Kickplug's vhost-user export), {@code --real-guest-only} (only those),
 * {@code --guest-image DIR} (the kernel and initramfs the harness builds), {@code --qemu PATH} and
 * {@code --guest-runtime S} (fio's runtime per point in the guest), {@code --guest-rounds N} (each point N times,
 * interleaved, medians reported).
 *
 * @param only whether the simulated seeds are skipped
 * @param image the image directory given ({@code --guest-image}, else {@value #IMAGE_ENV}), or null for the
 *     default {@link #DEFAULT_IMAGE} under the working directory
 * @param qemu the QEMU binary given, or null for {@code qemu-system-x86_64} on the PATH
 * @param runtimeNanos fio's runtime per point in the guest
 * @param rounds how many times each point runs ({@code --guest-rounds}), interleaved in one boot; the medians count
 */
public record RealGuestOptions(boolean only, Path image, String qemu, long runtimeNanos, int rounds) {

    /** The environment variable naming the image directory when {@code --guest-image} is not given. */
    public static final String IMAGE_ENV = "KICKPLUG_GUEST_IMAGE";
    /** Where the real-guest tests and bench.sh build it, relative to a source checkout. */
    public static final String DEFAULT_IMAGE = "bundles/vhost-user/target/realguest";
    public static final long DEFAULT_RUNTIME_NANOS = 3_000_000_000L;
    public static final int DEFAULT_ROUNDS = 3;
    /** How to get the image, for the usage and the "not run" lines. */
    public static final String HOW_TO_BUILD = "build it with bundles/vhost-user/src/test/realguest/realguest.sh prepare"
            + " DIR (from a source checkout, as root or with qemu-system-x86, busybox-static and fio installed) and"
            + " pass --guest-image DIR or set " + IMAGE_ENV;
    /**
     * The real-guest options: {@link #extract} takes exactly these out of kp:bench seeds' arguments (the flags without
     * a value), and the command reference lists them.
     */
    public static final OptionTable TABLE = new OptionTable("seeds --real-guest|--real-guest-only [options]",
            "also (or only) seeds 002, 003 and 004 on a Linux guest in QEMU over Kickplug's vhost-user export, with "
            + "the vhost-user bundle active; the guest image: " + HOW_TO_BUILD,
            OptionTable.Option.flag("--real-guest", "run the real-guest seeds after the simulated ones"),
            OptionTable.Option.flag("--real-guest-only", "run only the real-guest seeds"),
            OptionTable.Option.valued("--guest-image", "DIR", "$" + IMAGE_ENV + ", else " + DEFAULT_IMAGE,
                    "the kernel and initramfs the harness builds"),
            OptionTable.Option.valued("--qemu", "PATH", "qemu-system-x86_64 on the PATH", "the QEMU binary"),
            OptionTable.Option.valued("--guest-runtime", "S", DEFAULT_RUNTIME_NANOS / 1_000_000_000L + "s",
                    "fio's runtime per point in the guest, whole seconds from 1 to 600"),
            OptionTable.Option.valued("--guest-rounds", "N", Integer.toString(DEFAULT_ROUNDS), "runs of each point, "
                    + "interleaved in one boot; the medians count (1 to 20)"));

    public RealGuestOptions {
        if (runtimeNanos < 1_000_000_000L || runtimeNanos % 1_000_000_000L != 0 || runtimeNanos > 600_000_000_000L) {
            throw new IllegalArgumentException("--guest-runtime must be whole seconds from 1 to 600 (fio's runtime in"
                    + " the guest): " + runtimeNanos / 1e9 + "s");
        }
        if (rounds < 1 || rounds > 20) {
            throw new IllegalArgumentException("--guest-rounds must be from 1 to 20: " + rounds);
        }
    }

    /** The options found and the arguments left for {@link SeedsOptions#parse}; {@code realGuest} null when off. */
    public record Split(RealGuestOptions realGuest, List<String> rest) {
    }

    /**
     * Takes the real-guest options out of {@code args} ("--name value" or "--name=value"; the two flags take no
     * value), leaving the others in order.
     *
     * @param env the environment ({@value #IMAGE_ENV})
     * @throws IllegalArgumentException for a missing value, an option given twice, or a real-guest setting
     *     without {@code --real-guest}
     */
    public static Split extract(List<String> args, Map<String, String> env) {
        List<String> rest = new ArrayList<>();
        // The real-guest options given, in order, with their trimmed values (a flag's is empty).
        Map<String, String> given = new LinkedHashMap<>();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg == null || !arg.startsWith("--")) {
                rest.add(arg);
                continue;
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            if (!TABLE.has(name)) {
                rest.add(arg);
                continue;
            }
            if (given.containsKey(name)) {
                throw new IllegalArgumentException("option " + name + " given twice");
            }
            if (TABLE.flags().contains(name)) {
                if (eq >= 0) {
                    throw new IllegalArgumentException(name + " takes no value");
                }
                given.put(name, "");
                continue;
            }
            String value;
            if (eq >= 0) {
                value = arg.substring(eq + 1);
            } else if (i + 1 < args.size() && args.get(i + 1) != null && !args.get(i + 1).startsWith("--")) {
                value = args.get(++i);
            } else {
                value = "";
            }
            if (value.isBlank()) {
                throw new IllegalArgumentException(name + " needs a value (" + TABLE.expected() + ")");
            }
            given.put(name, value.trim());
        }
        boolean only = given.containsKey("--real-guest-only");
        if (!only && !given.containsKey("--real-guest")) {
            if (!given.isEmpty()) {
                throw new IllegalArgumentException(given.keySet().iterator().next()
                        + " needs --real-guest or --real-guest-only");
            }
            return new Split(null, rest);
        }
        String image = given.get("--guest-image");
        if (image == null && env != null && env.get(IMAGE_ENV) != null && !env.get(IMAGE_ENV).isBlank()) {
            image = env.get(IMAGE_ENV).trim();
        }
        String runtime = given.get("--guest-runtime");
        String rounds = given.get("--guest-rounds");
        long nanos = runtime == null ? DEFAULT_RUNTIME_NANOS : SeedsOptions.runtime(runtime);
        int n = RealGuestOptions.DEFAULT_ROUNDS;
        if (rounds != null) {
            try {
                n = Integer.parseInt(rounds);
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException("--guest-rounds must be an integer: '" + rounds + "'");
            }
        }
        return new Split(new RealGuestOptions(only, image == null ? null : path(image), given.get("--qemu"), nanos, n),
                rest);
    }

    /** The image directory to look in: the one given, or {@link #DEFAULT_IMAGE} under the working directory. */
    public Path imageDir() {
        return image != null ? image : Path.of(DEFAULT_IMAGE).toAbsolutePath();
    }

    private static Path path(String value) {
        try {
            return Path.of(value);
        } catch (InvalidPathException e) {
            throw new IllegalArgumentException("invalid --guest-image '" + value + "': " + e.getReason());
        }
    }
}
