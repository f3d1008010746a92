package io.kickplug.qmp.ds;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.control.BlockExports;
import io.kickplug.api.control.NbdServerControl;
import io.kickplug.api.control.ThrottleControl;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.qmp.Json;
import io.kickplug.qmp.QmpEngine;
import io.kickplug.qmp.QmpMonitors;
import io.kickplug.qmp.QmpServices;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * The QMP engine over the other bundles' services (all dynamic and optional: this bundle stays while they are
 * updated, and a command that needs one that is away says so), the monitors, and the Gogo command
 * {@code kp:qmp [--keyval] JSON}; {@code kp:qmp-monitor} is {@link QmpMonitorCommand}.
 */
@Component(service = QmpComponent.class, immediate = true, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=qmp",
})
public final class QmpComponent implements QmpServices {

    private static final System.Logger LOG = System.getLogger(QmpComponent.class.getName());
    private static final long SWAP_WAIT_MILLIS = 30_000;

    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile DiskManager diskManager;
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile NbdServerControl nbdServerControl;
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile ThrottleControl throttleControl;
    @Reference(cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile NotificationControl notificationControl;

    private final Map<String, BlockExports> exports = new ConcurrentHashMap<>();
    private final BundleContext context;
    private final ConfigStore store;
    private final QmpEngine engine;
    private final QmpMonitors monitors;

    @Activate
    public QmpComponent(BundleContext context, @Reference(name = "configurationAdmin") ConfigurationAdmin admin) {
        this.context = context;
        this.store = new ConfigStore(admin);
        this.engine = new QmpEngine(this, store, context.getBundle().getVersion().toString());
        @SuppressWarnings("unchecked")
        Map<String, Object> version = (Map<String, Object>) engine.execute(
                Map.of("execute", "query-version"), false).response().get("return");
        this.monitors = new QmpMonitors(engine::execute, version, this::quit);
        for (String path : store.monitors()) {
            try {
                monitors.start(Path.of(path));
            } catch (IOException | RuntimeException e) {
                LOG.log(System.Logger.Level.ERROR, "the QMP monitor on " + path + " could not be started again: "
                        + e.getMessage());
            }
        }
    }

    @Reference(cardinality = ReferenceCardinality.MULTIPLE, policy = ReferencePolicy.DYNAMIC,
            target = "(" + BlockExports.TYPE + "=*)")
    void addExports(BlockExports e, Map<String, Object> props) {
        exports.put(String.valueOf(props.get(BlockExports.TYPE)), e);
    }

    void removeExports(BlockExports e, Map<String, Object> props) {
        exports.remove(String.valueOf(props.get(BlockExports.TYPE)), e);
    }

    @Deactivate
    void deactivate() {
        monitors.close();
    }

    /** {@code kp:qmp}: one command object; its return value as JSON, or the statement fails with its desc. */
    @Descriptor("execute one QMP command object as qemu-storage-daemon's monitor does, e.g. "
            + "'{\"execute\":\"query-block-exports\"}'; prints the return value as JSON")
    public String qmp(
            @Descriptor("the arguments' scalars are strings, converted by type as QEMU's key=value command line "
                    + "(on/off, integers, sizes with suffixes)")
            @Parameter(names = "--keyval", presentValue = "true", absentValue = "false") boolean keyval,
            @Descriptor("JSON: the command object {\"execute\": NAME, \"arguments\": {...}}") String... json) {
        Object request;
        try {
            request = Json.parse(String.join(" ", json));
        } catch (Json.ParseException e) {
            throw new IllegalArgumentException("JSON parse error, " + e.getMessage());
        }
        QmpEngine.Reply reply = engine.execute(request, keyval);
        monitors.broadcast(reply.events());
        @SuppressWarnings("unchecked")
        Map<String, Object> error = (Map<String, Object>) reply.response().get("error");
        if (error != null) {
            throw new IllegalArgumentException(String.valueOf(error.get("desc")));
        }
        if (reply.quit()) {
            quit();
        }
        return Json.write(reply.response().get("return"));
    }

    /** {@code kp:qmp-monitor PATH}. */
    String startMonitor(String path) throws IOException {
        monitors.start(Path.of(path));
        saveMonitors();
        return "QMP monitor listening on " + Path.of(path).toAbsolutePath().normalize();
    }

    /** {@code kp:qmp-monitor --stop PATH}. */
    String stopMonitor(String path) {
        monitors.stop(Path.of(path));
        saveMonitors();
        return "QMP monitor on " + Path.of(path).toAbsolutePath().normalize() + " stopped";
    }

    /** {@code kp:qmp-monitor}. */
    String listMonitors() {
        StringBuilder out = new StringBuilder();
        monitors.list().forEach((p, n) -> out.append(p).append(": ").append(n).append(n == 1 ? " client" : " clients")
                .append('\n'));
        return out.length() == 0 ? "no QMP monitor" : out.toString().stripTrailing();
    }

    private void saveMonitors() {
        List<String> paths = new ArrayList<>();
        monitors.list().keySet().forEach(p -> paths.add(p.toString()));
        store.saveMonitors(paths);
    }

    @Override
    public DiskManager disks() {
        return diskManager;
    }

    @Override
    public BlockExports exports(String type) {
        return exports.get(type);
    }

    @Override
    public NbdServerControl nbdServer() {
        return nbdServerControl;
    }

    @Override
    public ThrottleControl throttle() {
        return throttleControl;
    }

    @Override
    public NotificationControl notifications() {
        return notificationControl;
    }

    @Override
    public Map<String, Object> swap(String name) {
        String bsn = name.startsWith("io.kickplug.") ? name : "io.kickplug." + name;
        if (bsn.equals("io.kickplug.api")) {
            throw new IllegalArgumentException("refusing to swap io.kickplug.api: a new version takes effect only by "
                    + "refreshing every Kickplug bundle");
        }
        if (bsn.equals(context.getBundle().getSymbolicName())) {
            throw new IllegalArgumentException("the QMP bundle cannot update itself from QMP: use kp:swap "
                    + "io.kickplug.qmp on the control socket");
        }
        Bundle bundle = null;
        for (Bundle b : context.getBundles()) {
            if (bsn.equals(b.getSymbolicName())) {
                bundle = b;
            }
        }
        if (bundle == null) {
            throw new IllegalArgumentException("no bundle " + bsn);
        }
        DiskManager before = diskManager;
        List<String> configured = before == null ? List.of() : before.configuredDisks();
        try {
            bundle.update();
            if (bundle.getState() != Bundle.ACTIVE) {
                bundle.start();
            }
        } catch (BundleException e) {
            throw new IllegalStateException("update of " + bsn + " failed: " + e.getMessage());
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SWAP_WAIT_MILLIS);
        int back = 0;
        while (System.nanoTime() - deadline < 0) {
            DiskManager dm = diskManager;
            try {
                back = dm == null ? 0 : (int) dm.list().stream().map(DiskInfo::name).filter(configured::contains)
                        .count();
            } catch (RuntimeException goingAway) {
                back = 0;
            }
            if (back == configured.size()) {
                break;
            }
            try {
                Thread.sleep(5); // the disks come back through ConfigAdmin in other bundles: nothing to wait on
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        Map<String, Object> out = new LinkedHashMap<>();
        out.put("bundle", bsn);
        out.put("version", bundle.getVersion().toString());
        out.put("disks", (long) configured.size());
        out.put("disks-back", (long) back);
        return out;
    }

    @Override
    public void quit() {
        Thread t = new Thread(() -> {
            try {
                context.getBundle(0).stop();
            } catch (BundleException | IllegalStateException e) {
                LOG.log(System.Logger.Level.ERROR, "quit: the framework did not stop: " + e.getMessage());
            }
        }, "kickplug-qmp-quit");
        t.start();
    }
}
