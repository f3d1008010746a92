package io.kickplug.api.guest;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Options as a command's user writes them: {@code --name value} or {@code --name=value}, each at most once. What
 * the values mean is the command's; this only splits and checks the shape.
 */
public final class OptionArgs {

    private OptionArgs() {
    }

    /**
     * The options in the order given.
     *
     * @param expected what the command accepts, for the error of a stray argument (e.g. "--runtime S or --json FILE")
     * @throws IllegalArgumentException for an argument that is not an option, an option without a value, or one
     *     given twice
     */
    public static Map<String, String> parse(List<String> args, String expected) {
        Map<String, String> options = new LinkedHashMap<>();
        for (int i = 0; i < args.size(); i++) {
            String arg = args.get(i);
            if (arg == null || !arg.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + arg + "' (expected " + expected + ")");
            }
            int eq = arg.indexOf('=');
            String name = eq < 0 ? arg : arg.substring(0, eq);
            String value;
            if (eq >= 0) {
                value = arg.substring(eq + 1);
            } else if (i + 1 < args.size()) {
                value = args.get(++i);
            } else {
                throw new IllegalArgumentException(name + " needs a value");
            }
            if (options.putIfAbsent(name, value) != null) {
                throw new IllegalArgumentException(name + " is given twice");
            }
        }
        return options;
    }
}
