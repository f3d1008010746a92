package io.kickplug.blk.backend;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import org.osgi.service.component.annotations.Component;

/** Opens {@link MemoryBackend}s. */
@Component(service = BackendFactory.class, property = BackendFactory.PROPERTY_KIND + "=memory")
public final class MemoryBackendFactory implements BackendFactory {

    @Override
    public String kind() {
        return "memory";
    }

    @Override
    public BlockBackend open(BackendSpec spec) {
        long size = Backends.checkedSize(spec);
        try {
            return new MemoryBackend(size, spec.readOnly());
        } catch (OutOfMemoryError e) {
            throw new DiskException("cannot allocate " + size + " bytes of direct memory for a memory disk ("
                    + e.getMessage() + "; see -XX:MaxDirectMemorySize)");
        }
    }
}
