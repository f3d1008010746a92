package io.kickplug.qmp;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.RbdImage;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.control.BlockExports;
import io.kickplug.api.control.NbdServerControl;
import io.kickplug.api.control.ThrottleControl;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A real disk manager (memory, null and file disks, and rbd disks that are memory disks of 8 MiB) behind the engine, and recording exports, NBD server and
 * throttle control in place of the other bundles' (those bundles test their side of the services).
 */
final class Fixture implements QmpServices, AutoCloseable {

    /** The specs the rbd factory was asked to open (a memory disk of 8 MiB stands in for each image). */
    final List<BackendSpec> rbdOpened = new ArrayList<>();
    final DiskRegistry disks = InProcessHost.registry(() -> {
        List<BackendFactory> all = new ArrayList<>(InProcessHost.backends());
        all.add(new BackendFactory() {
            @Override
            public String kind() {
                return RbdImage.KIND;
            }

            @Override
            public BlockBackend open(BackendSpec spec) throws IOException {
                RbdImage.parse(spec.path()); // the path the rbd bundle takes
                rbdOpened.add(spec);
                return new MemoryBackendFactory().open(new BackendSpec("memory", null, 8L << 20, spec.readOnly()));
            }
        });
        return all;
    });
    final Recorded vhost = new Recorded("vhost-user-blk");
    final Recorded nbd = new Recorded("nbd");
    final List<String> throttled = new ArrayList<>();
    final MemoryStore store = new MemoryStore();
    String nbdAddress;
    int quits;

    QmpEngine engine() {
        return new QmpEngine(this, store, "0.1.0.test");
    }

    /** A store that keeps the state in memory, as ConfigAdmin would across a bundle update. */
    static final class MemoryStore implements QmpServices.Store {
        String state;

        @Override
        public String load() {
            return state;
        }

        @Override
        public void save(String s) {
            state = s;
        }
    }

    /** Exports recorded with the arguments they were made with; keyed by disk (vhost) or name (nbd). */
    final class Recorded implements BlockExports {
        final String type;
        final Map<String, Export> made = new LinkedHashMap<>();
        final List<Map<String, String>> options = new ArrayList<>();

        Recorded(String type) {
            this.type = type;
        }

        @Override
        public Export add(String disk, boolean writable, Map<String, String> opts) {
            disks.info(disk); // unknown disk: DiskException, as the real bundles
            String key = type.equals("nbd") ? opts.get("name") : disk;
            if (made.containsKey(key)) {
                throw new DiskException("'" + key + "' is exported already");
            }
            Export e = new Export(key, disk, writable, type.equals("nbd") ? nbdAddress + "/" + key
                    : opts.get("socket"), "listening");
            made.put(key, e);
            options.add(Map.copyOf(opts));
            return e;
        }

        @Override
        public void delete(String key) {
            if (made.remove(key) == null) {
                throw new DiskException("no export '" + key + "'");
            }
        }

        @Override
        public List<Export> list() {
            return List.copyOf(made.values());
        }
    }

    @Override
    public DiskManager disks() {
        return disks;
    }

    @Override
    public BlockExports exports(String type) {
        return type.equals("nbd") ? nbd : type.equals("vhost-user-blk") ? vhost : null;
    }

    @Override
    public NbdServerControl nbdServer() {
        return new NbdServerControl() {
            @Override
            public String start(String unixPath, String host, int port, int maxConnections) {
                if (nbdAddress != null) {
                    throw new IllegalStateException("an NBD server runs already");
                }
                nbdAddress = unixPath != null ? "unix:" + unixPath : "tcp:" + host + ":" + port;
                return nbdAddress;
            }

            @Override
            public void stop() {
                nbdAddress = null;
                nbd.made.clear();
            }

            @Override
            public String address() {
                return nbdAddress;
            }
        };
    }

    @Override
    public ThrottleControl throttle() {
        return (disk, group, limits) -> throttled.add(disk + " " + group + " " + new java.util.TreeMap<>(limits));
    }

    @Override
    public NotificationControl notifications() {
        return disks;
    }

    @Override
    public Map<String, Object> swap(String bundle) {
        throw new IllegalArgumentException("no bundle " + bundle);
    }

    @Override
    public void quit() {
        quits++;
    }

    @Override
    public void close() {
        disks.close();
    }
}
