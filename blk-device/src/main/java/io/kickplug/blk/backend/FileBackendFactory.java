package io.kickplug.blk.backend;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import org.osgi.service.component.annotations.Component;

/** Opens {@link FileBackend}s: raw image files. */
@Component(service = BackendFactory.class, property = BackendFactory.PROPERTY_KIND + "=file")
public final class FileBackendFactory implements BackendFactory {

    @Override
    public String kind() {
        return "file";
    }

    @Override
    public BlockBackend open(BackendSpec spec) {
        return FileBackend.open(spec);
    }
}
