package io.kickplug.export.nbd.ds;

import io.kickplug.export.nbd.NbdService;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code kp:nbd-list}: QEMU's {@code query-block-exports}. */
@Component(service = NbdListCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=nbd-list",
})
public final class NbdListCommand {

    private final NbdService service;

    @Activate
    public NbdListCommand(@Reference(name = "nbdService") NbdService service) {
        this.service = service;
    }

    @Descriptor("list the NBD exports: disk, size, transmission flags, connections, requests and the URI clients use")
    public String _main(
            @Descriptor("JSON instead of text (shape in docs/reference/json.md)")
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("the command's own name, which Gogo passes first to _main") String... function) {
        return NbdCommands.list(service, json);
    }
}
