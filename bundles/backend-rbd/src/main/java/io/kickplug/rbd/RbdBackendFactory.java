package io.kickplug.rbd;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.RbdImage;
import java.io.IOException;
import org.osgi.service.component.annotations.Component;

/**
 * Opens Ceph RBD disks: {@code kp:attach NAME --backend rbd --pool P --image I [--snapshot S] [--namespace N]
 * [--conf PATH] [--id USER] [--keyring PATH]}, or a disk configuration with {@code backend=rbd} and the same
 * properties. The image travels in {@link BackendSpec#path()} as QEMU's rbd filename ({@link RbdImage#toPath()});
 * the size is the image's (a size given must match it). The disks of one cluster share its connection.
 */
@Component(service = BackendFactory.class, property = BackendFactory.PROPERTY_KIND + "=" + RbdImage.KIND)
public final class RbdBackendFactory implements BackendFactory {

    private final RbdCluster.Registry clusters = new RbdCluster.Registry();

    @Override
    public String kind() {
        return RbdImage.KIND;
    }

    /** Cluster connections open now (for tests: one per cluster, none without disks). */
    int connections() {
        return clusters.connections();
    }

    @Override
    public BlockBackend open(BackendSpec spec) throws IOException {
        RbdImage image;
        try {
            image = RbdImage.parse(spec.path());
        } catch (IllegalArgumentException e) {
            throw new DiskException(e.getMessage());
        }
        if (spec.direct()) {
            throw new DiskException("an rbd disk takes no --direct (librbd decides how it does I/O)");
        }
        RbdBackend backend;
        try {
            // Connecting (loading libceph-common, the first cluster handle) needs a large stack: BigStack.
            backend = BigStack.run("open", () -> RbdBackend.open(image, spec.readOnly(), clusters));
        } catch (IOException e) {
            throw new DiskException(e.getMessage());
        }
        String wrong = null;
        if (spec.sizeBytes() != 0 && spec.sizeBytes() != backend.size()) {
            wrong = "has " + backend.size() + " bytes, not the " + spec.sizeBytes() + " asked for";
        } else if (backend.size() % 512 != 0 || backend.size() == 0) {
            wrong = "has " + backend.size() + " bytes, not a positive multiple of 512";
        }
        if (wrong != null) {
            backend.close();
            throw new DiskException("rbd image " + image.displayName() + " " + wrong);
        }
        return backend;
    }
}
