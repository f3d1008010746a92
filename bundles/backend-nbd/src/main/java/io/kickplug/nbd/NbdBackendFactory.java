package io.kickplug.nbd;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import java.io.IOException;
import org.osgi.service.component.annotations.Component;

/**
 * Opens NBD disks: {@code kp:attach --backend nbd --uri URI NAME}, or a disk configuration with {@code backend=nbd}
 * and {@code uri}. The URI travels in {@link BackendSpec#path()}; the size comes from the server (a size given must
 * match it).
 */
@Component(service = BackendFactory.class, property = BackendFactory.PROPERTY_KIND + "=nbd")
public final class NbdBackendFactory implements BackendFactory {

    @Override
    public String kind() {
        return "nbd";
    }

    @Override
    public BlockBackend open(BackendSpec spec) throws IOException {
        NbdUri uri;
        try {
            uri = NbdUri.parse(spec.path());
        } catch (IllegalArgumentException e) {
            throw new DiskException(e.getMessage());
        }
        if (spec.direct()) {
            throw new DiskException("an NBD disk takes no --direct (the server decides how it does I/O)");
        }
        NbdBackend backend;
        try {
            backend = NbdBackend.open(uri, spec.readOnly(), NbdBackend.Options.DEFAULTS);
        } catch (IOException e) {
            throw new DiskException(e.getMessage());
        }
        if (spec.sizeBytes() != 0 && spec.sizeBytes() != backend.size()) {
            long size = backend.size();
            backend.close();
            throw new DiskException("NBD export " + uri + " has " + size + " bytes, not the " + spec.sizeBytes()
                    + " asked for");
        }
        if (backend.size() % 512 != 0 || backend.size() == 0) {
            long size = backend.size();
            backend.close();
            throw new DiskException("NBD export " + uri + " has " + size + " bytes, not a positive multiple of 512");
        }
        return backend;
    }
}
