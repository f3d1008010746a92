package io.kickplug.shell;

import io.kickplug.api.blk.DiskManager;
import java.util.List;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Function;

/**
 * A command that sets one property of one running disk: {@code [--json] NAME VALUE}. A Gogo {@link Function}
 * because Gogo maps a command to a Java method by name, and a name with '-' is none. The subclass gives the
 * usage, parses VALUE and applies it through the {@link DiskManager}.
 *
 * @param <T> what VALUE parses to
 */
abstract class DiskSettingCommand<T> implements Function {

    private final DiskManager disks;
    private final String usage;
    private final java.util.function.Function<String, T> parser;

    DiskSettingCommand(DiskManager disks, String usage, java.util.function.Function<String, T> parser) {
        this.disks = disks;
        this.usage = usage;
        this.parser = parser;
    }

    @Override
    public Object execute(CommandSession session, List<Object> arguments) {
        return run(arguments);
    }

    /** The command without Gogo: the disk and the value, after an optional {@code --json}. */
    String run(List<Object> arguments) {
        boolean json = !arguments.isEmpty() && "--json".equals(String.valueOf(arguments.get(0)));
        List<Object> args = json ? arguments.subList(1, arguments.size()) : arguments;
        if (args.size() != 2 || args.get(0) == null) {
            throw new IllegalArgumentException(usage);
        }
        T value;
        try {
            value = parser.apply(String.valueOf(args.get(1)));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(e.getMessage() + "; " + usage);
        }
        return apply(disks, args.get(0).toString(), value, json);
    }

    /** Sets {@code value} on {@code disk} and says what it is now (as JSON with {@code json}). */
    abstract String apply(DiskManager disks, String disk, T value, boolean json);
}
