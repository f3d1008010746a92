package io.kickplug.export.nbd.ds;

import io.kickplug.api.control.BlockExports;
import io.kickplug.api.control.NbdServerControl;
import io.kickplug.export.nbd.Listener;
import io.kickplug.export.nbd.NbdServer;
import io.kickplug.export.nbd.NbdService;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;

/**
 * The NBD server and exports as {@link NbdServerControl} and {@link BlockExports} ({@code nbd}), for the QMP
 * monitor's nbd-server-start, nbd-server-stop and block-export-add: the same calls, and the same saved
 * configurations, as {@code kp:nbd-server} and {@code kp:nbd-export}.
 */
@Component(service = {BlockExports.class, NbdServerControl.class}, property = BlockExports.TYPE + "=nbd")
public final class NbdBlockExports implements BlockExports, NbdServerControl {

    private final NbdService service;

    @Activate
    public NbdBlockExports(@Reference(name = "nbdService") NbdService service) {
        this.service = service;
    }

    @Override
    public Export add(String disk, boolean writable, Map<String, String> options) {
        String name = null;
        for (Map.Entry<String, String> o : options.entrySet()) {
            if (!o.getKey().equals("name")) {
                throw new IllegalArgumentException("unknown nbd export option '" + o.getKey() + "' (name)");
            }
            name = o.getValue();
        }
        NbdService.ExportView v = service.export(disk, name, writable);
        return export(v);
    }

    @Override
    public void delete(String key) {
        service.stopExport(key);
    }

    @Override
    public List<Export> list() {
        List<Export> out = new ArrayList<>();
        for (NbdService.ExportView v : service.list()) {
            out.add(export(v));
        }
        return out;
    }

    private static Export export(NbdService.ExportView v) {
        return new Export(v.status().name(), v.status().disk(), v.status().writable(), v.uri(),
                v.status().connections() > 0 ? "connected" : "listening");
    }

    @Override
    public String start(String unixPath, String host, int port, int maxConnections) throws IOException {
        Listener listener = unixPath != null ? Listener.unix(unixPath) : Listener.tcp(host, port);
        return service.start(listener, maxConnections).address();
    }

    @Override
    public void stop() {
        service.stop();
    }

    @Override
    public String address() {
        NbdServer.Status s = service.status();
        return s == null ? null : s.address();
    }
}
