package io.kickplug.vhost.ds;

import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code kp:vhost-list [--json]}: the vhost-user exports and their front-ends. A hyphenated name is no Java method
 * name, so the command is {@code _main}, which Gogo runtime 1.1.6's {@code Reflective} calls for any function name,
 * passing that name first.
 */
@Component(service = VhostListCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=vhost-list",
})
public final class VhostListCommand {

    private final VhostCommands vhost;

    @Activate
    public VhostListCommand(@Reference(name = "vhostCommands") VhostCommands vhost) {
        this.vhost = vhost;
    }

    /**
     * {@code kp:vhost-list}.
     *
     * @param operands the function name Gogo passes first; the command takes no operand
     */
    @Descriptor("list the vhost-user exports: per disk its state, sessions, queues, memory, kicks, interrupts, "
            + "refusals and socket, and each connected front-end's features")
    public String _main(
            @Descriptor(VhostCommands.JSON)
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("the function name Gogo passes; the command takes no operand (one is refused with the usage)")
            String... operands) {
        return vhost.list(VhostStopCommand.arguments(json, operands));
    }
}
