package io.kickplug.virtio.ds;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.memory.MemoryRegion;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import java.nio.ByteBuffer;
import java.util.List;
import org.osgi.service.component.annotations.Component;

/** Off-heap guest memory. */
@Component(service = GuestMemoryFactory.class)
public final class GuestMemoryFactoryComponent implements GuestMemoryFactory {

    @Override
    public GuestMemory allocate(long size) {
        return OffHeapGuestMemory.allocate(size);
    }

    @Override
    public GuestMemory allocate(List<MemoryRegion> layout) {
        return OffHeapGuestMemory.allocate(layout, OffHeapGuestMemory.DEFAULT_CHUNK_SHIFT);
    }

    @Override
    public GuestMemory wrap(List<MemoryRegion> layout, List<List<ByteBuffer>> chunks) {
        return OffHeapGuestMemory.wrap(layout, chunks);
    }
}
