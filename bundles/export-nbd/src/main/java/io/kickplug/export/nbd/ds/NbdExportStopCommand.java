package io.kickplug.export.nbd.ds;

import io.kickplug.export.nbd.NbdService;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code kp:nbd-export-stop}: QEMU's {@code block-export-del}. */
@Component(service = NbdExportStopCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=nbd-export-stop",
})
public final class NbdExportStopCommand {

    private final NbdService service;

    @Activate
    public NbdExportStopCommand(@Reference(name = "nbdService") NbdService service) {
        this.service = service;
    }

    @Descriptor("end an NBD export: its clients' requests in flight are answered, then they are disconnected")
    public String _main(
            @Descriptor("JSON instead of text (shape in docs/reference/json.md)")
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("EXPORT: the export name") String... operands) {
        return NbdCommands.stopExport(service, json, NbdCommands.one(operands, NbdCommands.STOP_USAGE));
    }
}
