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
        if (spec.path() != null && sharedFile(spec.path())) {
            // The disk registry names a shared-memory file for disks whose bytes must outlive this bundle.
            try {
                return SharedMemoryBackend.open(java.nio.file.Path.of(spec.path()), spec.sizeBytes(), spec.readOnly());
            } catch (java.io.IOException e) {
                throw new DiskException("cannot open the shared memory of a memory disk (" + spec.path() + "): "
                        + e.getMessage(), e);
            }
        }
        long size = Backends.checkedSize(spec); // refuses any other path
        try {
            return new MemoryBackend(size, spec.readOnly());
        } catch (OutOfMemoryError e) {
            throw new DiskException("cannot allocate " + size + " bytes of direct memory for a memory disk ("
                    + e.getMessage() + "; see -XX:MaxDirectMemorySize)");
        }
    }

    /** Only the disk registry's shared-memory files ({@code kickplug-<pid>-<disk>.disk}) stand for a memory disk. */
    private static boolean sharedFile(String path) {
        String name = java.nio.file.Path.of(path).getFileName().toString();
        return name.startsWith("kickplug-") && name.endsWith(".disk");
    }
}
