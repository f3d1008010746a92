package io.kickplug.vhost.ds;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code kp:vhost-stop [--json] <disk>}: ends a disk's vhost-user export and deletes its saved configuration. A
 * hyphenated name is no Java method name, so the command is {@code _main}, which Gogo runtime 1.1.6's
 * {@code Reflective} calls for any function name, passing that name first.
 */
@Component(service = VhostStopCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=vhost-stop",
})
public final class VhostStopCommand {

    private final VhostCommands vhost;

    @Activate
    public VhostStopCommand(@Reference(name = "vhostCommands") VhostCommands vhost) {
        this.vhost = vhost;
    }

    /**
     * {@code kp:vhost-stop}.
     *
     * @param operands the function name Gogo passes first, then the command's operands
     */
    @Descriptor("stop a disk's vhost-user export: the front-end is disconnected, the device reset, the socket removed"
            + " and the saved export deleted")
    public String _main(
            @Descriptor(VhostCommands.JSON)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("DISK: the exported disk") String... operands) {
        return vhost.stop(arguments(json, operands));
    }

    /** What a user typed, back as one list: {@code --json} first, then the operands after the function name. */
    static List<String> arguments(boolean json, String[] operands) {
        List<String> args = new ArrayList<>();
        if (json) {
            args.add("--json");
        }
        if (operands.length > 1) {
            args.addAll(Arrays.asList(operands).subList(1, operands.length));
        }
        return args;
    }
}
