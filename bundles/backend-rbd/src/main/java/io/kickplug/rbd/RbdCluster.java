package io.kickplug.rbd;

import com.sun.jna.Pointer;
import com.sun.jna.ptr.PointerByReference;
import io.kickplug.api.blk.RbdImage;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.HashMap;
import java.util.Map;

/**
 * One connection to a Ceph cluster (a librados cluster handle), shared by the disks that name the same conf, user
 * and keyring ({@link RbdImage#clusterKey()}): the first disk connects, the last one to go shuts it down.
 */
final class RbdCluster {

    private static final Logger LOG = System.getLogger(RbdCluster.class.getName());
    /** How long a connect waits for the monitors (librados's client_mount_timeout, 300 s by default). */
    static final String MOUNT_TIMEOUT_S = "30";

    /** The clusters of one factory (one version of the bundle), by key. */
    static final class Registry {
        private final Map<String, RbdCluster> clusters = new HashMap<>();

        /** The connection for {@code image}'s cluster, connecting on first use; release it with {@link #release}. */
        synchronized RbdCluster acquire(RbdImage image) throws IOException {
            RbdCluster c = clusters.get(image.clusterKey());
            if (c == null) {
                c = new RbdCluster(image.clusterKey(), connect(image));
                clusters.put(c.key, c);
            }
            c.users++;
            return c;
        }

        synchronized void release(RbdCluster c) {
            if (--c.users > 0) {
                return;
            }
            clusters.remove(c.key);
            Librbd.Rados.rados_shutdown(c.handle);
            LOG.log(Level.INFO, "rbd: cluster connection closed with its last disk");
        }

        synchronized int connections() {
            return clusters.size();
        }
    }

    private final String key;
    final Pointer handle;
    /** Disks using the connection; under the registry. */
    private int users;

    private RbdCluster(String key, Pointer handle) {
        this.key = key;
        this.handle = handle;
    }

    private static Pointer connect(RbdImage image) throws IOException {
        String loadError = Librbd.loadError();
        if (loadError != null) {
            throw new IOException("librbd cannot be loaded (install librbd1): " + loadError);
        }
        PointerByReference ref = new PointerByReference();
        String user = "client." + (image.user() == null ? "admin" : image.user());
        check(Librbd.Rados.rados_create2(ref, "ceph", user, 0), "rados_create2 for " + user);
        Pointer cluster = ref.getValue();
        try {
            int r = Librbd.Rados.rados_conf_read_file(cluster, image.conf());
            if (r < 0 && image.conf() != null) {
                throw new IOException("cannot read the Ceph configuration " + image.conf() + ": errno "
                        + Errno.describe(r));
            }
            if (image.keyring() != null) {
                check(Librbd.Rados.rados_conf_set(cluster, "keyring", image.keyring()), "keyring " + image.keyring());
            }
            check(Librbd.Rados.rados_conf_set(cluster, "client_mount_timeout", MOUNT_TIMEOUT_S),
                    "client_mount_timeout");
            long start = System.nanoTime();
            check(Librbd.Rados.rados_connect(cluster), "connecting to the Ceph cluster"
                    + (image.conf() == null ? "" : " of " + image.conf()) + " as " + user);
            LOG.log(Level.INFO, "rbd: connected to the cluster" + (image.conf() == null ? "" : " of " + image.conf())
                    + " as " + user + " in " + (System.nanoTime() - start) / 1_000_000 + " ms");
            return cluster;
        } catch (IOException | RuntimeException e) {
            Librbd.Rados.rados_shutdown(cluster);
            throw e;
        }
    }

    static void check(int r, String what) throws IOException {
        if (r < 0) {
            throw new IOException(what + " failed: errno " + Errno.describe(r));
        }
    }
}
