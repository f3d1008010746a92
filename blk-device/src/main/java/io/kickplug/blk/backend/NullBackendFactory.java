package io.kickplug.blk.backend;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import org.osgi.service.component.annotations.Component;

/** Opens {@link NullBackend}s. */
@Component(service = BackendFactory.class, property = BackendFactory.PROPERTY_KIND + "=null")
public final class NullBackendFactory implements BackendFactory {

    @Override
    public String kind() {
        return "null";
    }

    @Override
    public BlockBackend open(BackendSpec spec) {
        return new NullBackend(Backends.checkedSize(spec), spec.readOnly(), spec.readZeroes(), spec.latencyNs());
    }
}
