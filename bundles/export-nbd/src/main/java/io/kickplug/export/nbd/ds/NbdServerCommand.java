package io.kickplug.export.nbd.ds;

import io.kickplug.export.nbd.NbdService;
import java.io.IOException;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code kp:nbd-server}: QEMU's {@code --nbd-server} / {@code nbd-server-start} and {@code nbd-server-stop}. A
 * hyphenated command has no Java method of its name: Gogo runtime 1.1.6's Reflective calls {@code _main} for any
 * function of the component, with the function's name as the first argument.
 */
@Component(service = NbdServerCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=nbd-server",
})
public final class NbdServerCommand {

    private final NbdService service;

    @Activate
    public NbdServerCommand(@Reference(name = "nbdService") NbdService service) {
        this.service = service;
    }

    @Descriptor("the NBD server: 'start' listens (on a Unix socket, TCP or an inherited socket), 'stop' ends it and "
            + "every export, nothing shows its status")
    public String _main(
            @Descriptor("start: listen on this Unix socket path (clients: nbd+unix:///EXPORT?socket=PATH)")
            @Parameter(names = "--socket", absentValue = "") String socket,
            @Descriptor("start: listen on TCP at this host name or address (clients: nbd://HOST:PORT/EXPORT)")
            @Parameter(names = "--host", absentValue = "") String host,
            @Descriptor("start: the TCP port with --host (default 10809)")
            @Parameter(names = "--port", absentValue = "") String port,
            @Descriptor("start: listen on a Unix socket this process inherited, by descriptor number")
            @Parameter(names = "--fd", absentValue = "") String fd,
            @Descriptor("start: most connections at once, 0 for no limit (default 16; 1 leaves NBD_FLAG_CAN_MULTI_CONN "
                    + "out)")
            @Parameter(names = "--max-connections", absentValue = "") String maxConnections,
            @Descriptor("JSON instead of text (shape in docs/reference/json.md)")
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("[start|stop]: start listens, stop ends the server and every export, nothing shows the status")
            String... operands) throws IOException {
        return NbdCommands.server(service, socket, host, port, fd, maxConnections, json, NbdCommands.afterName(operands));
    }
}
