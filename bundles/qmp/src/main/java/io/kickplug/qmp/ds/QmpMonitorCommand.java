package io.kickplug.qmp.ds;

import java.io.IOException;
import java.util.Arrays;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * {@code kp:qmp-monitor PATH} starts a QMP monitor on a Unix socket (qemu-storage-daemon's {@code --chardev
 * socket,id=c,path=PATH,server=on,wait=off --monitor chardev=c}), {@code --stop PATH} stops it, no operand lists
 * them. The monitors are saved and listen again after an update of this bundle.
 */
@Component(service = QmpMonitorCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=qmp-monitor",
})
public final class QmpMonitorCommand {

    static final String USAGE = "usage: kp:qmp-monitor [--stop] [PATH]";

    private final QmpComponent qmp;

    @Activate
    public QmpMonitorCommand(@Reference(name = "qmp") QmpComponent qmp) {
        this.qmp = qmp;
    }

    @Descriptor("start a QMP monitor listening on a Unix socket (qemu-storage-daemon's --monitor), stop it with "
            + "--stop, or list the monitors")
    public String _main(
            @Descriptor("stop the monitor on PATH: its clients are disconnected, the socket removed")
            @Parameter(names = "--stop", presentValue = "true", absentValue = "false") boolean stop,
            @Descriptor("PATH: the Unix socket") String... operands) throws IOException {
        // Gogo hands a _main method the function's name first.
        String[] path = operands.length == 0 ? operands : Arrays.copyOfRange(operands, 1, operands.length);
        if (path.length == 0 && !stop) {
            return qmp.listMonitors();
        }
        if (path.length != 1) {
            throw new IllegalArgumentException(USAGE);
        }
        return stop ? qmp.stopMonitor(path[0]) : qmp.startMonitor(path[0]);
    }
}
