package io.kickplug.export.nbd.ds;

import io.kickplug.export.nbd.NbdService;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/** {@code kp:nbd-export}: QEMU's {@code --export type=nbd} / {@code block-export-add type=nbd}. */
@Component(service = NbdExportCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=nbd-export",
})
public final class NbdExportCommand {

    private final NbdService service;

    @Activate
    public NbdExportCommand(@Reference(name = "nbdService") NbdService service) {
        this.service = service;
    }

    @Descriptor("export an attached disk over the running NBD server; read-only unless --writable")
    public String _main(
            @Descriptor("the export name clients ask for (default: the disk name)")
            @Parameter(names = "--name", absentValue = "") String name,
            @Descriptor("allow writes, trims and write-zeroes (default: read-only, NBD_FLAG_READ_ONLY)")
            @Parameter(names = "--writable", presentValue = "true", absentValue = "false") boolean writable,
            @Descriptor("JSON instead of text (shape in docs/reference/json.md)")
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("DISK: the attached disk to export") String... operands) {
        return NbdCommands.export(service, name, writable, json, NbdCommands.one(operands, NbdCommands.EXPORT_USAGE));
    }
}
