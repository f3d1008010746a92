package io.kickplug.api.guest;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Options as a command's user writes them: {@code --name value} or {@code --name=value}, each at most once. What
 * the values mean is the command's; this only splits and checks the shape.
 */
public final class OptionArgs {

    private OptionArgs() {
    }

    /** What {@link #parse(List, String, Set)} found: the options (a flag's value is "true") and the operands. */
    public record Parsed(Map<String, String> options, List<String> operands) {
    }

    /**
     * The options in the order given.
     *
     * @param expected what the command accepts, for the error of a stray argument (e.g. "--runtime S or --json FILE")
     * @throws IllegalArgumentException for an argument that is not an option, an option without a value, or one
     *     given twice
     */
    public static Map<String, String> parse(List<String> args, String expected) {
        Parsed parsed = parse(args, expected, Set.of());
        if (!parsed.operands().isEmpty()) {
            throw new IllegalArgumentException("unexpected argument '" + parsed.operands().get(0) + "' (expected "
                    + expected + ")");
        }
        return parsed.options();
    }

    /**
     * Options, flags and operands: {@code --name value} or {@code --name=value}, each at most once; a name in
     * {@code flags} takes no value (its value is "true"); any other argument is an operand (in order).
     *
     * @param expected what the command accepts, for the errors
     * @throws IllegalArgumentException for an option without a value, or one given twice
     */
    public static Parsed parse(List<String> args, String expected, Set<String> flags) {
        Map<String, String> options = new LinkedHashMap<>();
        List<String> operands = new ArrayList<>();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg == null || !arg.startsWith("--")) {
                operands.add(arg);
                continue;
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            String value;
            if (eq >= 0) {
                value = arg.substring(eq + 1);
            } else if (flags.contains(name)) {
                value = "true";
            } else if (i + 1 < args.size()) {
                value = args.get(++i);
            } else {
                throw new IllegalArgumentException(name + " needs a value");
            }
            if (options.putIfAbsent(name, value) != null) {
                throw new IllegalArgumentException(name + " is given twice");
            }
        }
        return new Parsed(options, List.copyOf(operands));
    }
}
