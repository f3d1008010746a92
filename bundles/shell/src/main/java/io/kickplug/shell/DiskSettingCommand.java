package io.kickplug.shell;

import io.kickplug.api.blk.DiskManager;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A command that sets one property of one running disk: {@code [--json] NAME VALUE}. The subclass declares the Gogo
 * method (with its {@code @Descriptor}s and the {@code --json} {@code @Parameter}, so {@code help} and the command
 * reference show them), gives the usage, parses VALUE and applies it through the {@link DiskManager}. The operands
 * arrive as one array, so that a wrong count is answered with the usage rather than Gogo's "Cannot coerce".
 *
 * @param <T> what VALUE parses to
 */
abstract class DiskSettingCommand<T> {

    private final DiskManager disks;
    private final String usage;
    private final java.util.function.Function<String, T> parser;

    DiskSettingCommand(DiskManager disks, String usage, java.util.function.Function<String, T> parser) {
        this.disks = disks;
        this.usage = usage;
        this.parser = parser;
    }

    /** The command without Gogo: the disk and the value, after an optional {@code --json}. */
    String run(List<Object> arguments) {
        boolean json = !arguments.isEmpty() && "--json".equals(String.valueOf(arguments.get(0)));
        List<Object> args = json ? arguments.subList(1, arguments.size()) : arguments;
        List<String> operands = new ArrayList<>();
        for (Object a : args) {
            operands.add(a == null ? null : a.toString());
        }
        return run(json, operands);
    }

    /** The command once Gogo took {@code --json} out: {@code operands} must be the disk and the value. */
    String run(boolean json, String... operands) {
        return run(json, Arrays.asList(operands));
    }

    private String run(boolean json, List<String> operands) {
        if (operands.size() != 2 || operands.get(0) == null) {
            throw new IllegalArgumentException(usage);
        }
        T value;
        try {
            value = parser.apply(String.valueOf(operands.get(1)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + "; " + usage);
        }
        return apply(disks, operands.get(0), value, json);
    }

    /** Sets {@code value} on {@code disk} and says what it is now (as JSON with {@code json}). */
    abstract String apply(DiskManager disks, String disk, T value, boolean json);
}
