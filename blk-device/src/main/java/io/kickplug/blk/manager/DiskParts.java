package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.transport.TransportFactory;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.blk.device.VirtioBlkDevice;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.charset.StandardCharsets;
import java.util.Collection;
import java.util.List;
import java.util.Objects;
import java.util.TreeSet;
import java.util.function.Supplier;

/**
 * Opens and closes the parts a {@link DiskRegistry} disk is made of: its backend (from the factory of its kind),
 * its guest memory (in process memory or a shared-memory file), its transport, and the GET_ID serial; closes
 * them again in order, collecting failures. Each failure to make a part is a {@link DiskException} naming the
 * disk. Holds no state of its own beyond the services it makes the parts with; the registry's monitor guards
 * its callers.
 */
final class DiskParts {

    /** The registry's logger: these messages are the registry's. */
    private static final Logger LOG = System.getLogger(DiskRegistry.class.getName());

    private final TransportFactory transports;
    private final GuestMemoryFactory memoryFactory;
    private final Supplier<? extends Collection<BackendFactory>> backendFactories;

    /**
     * @param backendFactories the backend factories available at the moment of the call
     */
    DiskParts(TransportFactory transports, GuestMemoryFactory memoryFactory,
            Supplier<? extends Collection<BackendFactory>> backendFactories) {
        this.transports = Objects.requireNonNull(transports, "transports");
        this.memoryFactory = Objects.requireNonNull(memoryFactory, "memoryFactory");
        this.backendFactories = Objects.requireNonNull(backendFactories, "backendFactories");
    }

    /** The factory of backends of {@code kind} available now. */
    BackendFactory factoryFor(String kind) {
        Collection<BackendFactory> available = backendFactories.get();
        TreeSet<String> kinds = new TreeSet<>();
        if (available != null) {
            for (BackendFactory factory : available) {
                if (factory.kind().equals(kind)) {
                    return factory;
                }
                kinds.add(factory.kind());
            }
        }
        throw new DiskException("unknown backend kind '" + kind + "' (available: "
                + (kinds.isEmpty() ? "none" : String.join(", ", kinds)) + ")");
    }

    /** {@code spec} with a memory disk's backend pointing at its shared-memory file, when there is shared memory. */
    static DiskSpec withSharedBytes(DiskSpec spec, SharedMemory shared) {
        BackendSpec b = sharedBytes(spec, shared);
        return b == spec.backend() ? spec : spec.withBackend(b);
    }

    private static BackendSpec sharedBytes(DiskSpec spec, SharedMemory shared) {
        BackendSpec b = spec.backend();
        if (shared == null || !"memory".equals(b.kind()) || b.path() != null) {
            return b;
        }
        return new BackendSpec(b.kind(), shared.diskFile(spec.name()).toString(), b.sizeBytes(), b.readOnly(),
                b.direct(), b.readZeroes(), b.latencyNs());
    }

    static BlockBackend open(BackendFactory factory, DiskSpec spec) {
        BlockBackend backend;
        try {
            backend = factory.open(spec.backend());
        } catch (DiskException e) {
            throw e;
        } catch (IOException | RuntimeException e) {
            throw new DiskException("cannot open the " + spec.backend().kind() + " backend of disk '" + spec.name()
                    + "': " + e.getMessage(), e);
        }
        long size = backend.size();
        if (size <= 0 || size % VirtioBlk.SECTOR_SIZE != 0) {
            try {
                backend.close();
            } catch (IOException | RuntimeException e) {
                LOG.log(Level.WARNING, "closing a refused backend failed", e);
            }
            throw new DiskException("the " + backend.kind() + " backend of disk '" + spec.name() + "' has size " + size
                    + ", not a positive multiple of 512 bytes");
        }
        return backend;
    }

    /** The disk's guest memory: mapped from its shared-memory file when {@code shared} is set. */
    GuestMemory allocate(DiskSpec spec, SharedMemory shared) {
        try {
            if (shared != null) {
                return shared.mapGuestMemory(spec.name(), spec.guestMemoryBytes(), memoryFactory);
            }
            return memoryFactory.allocate(spec.guestMemoryBytes());
        } catch (IOException e) {
            throw new DiskException("cannot map the shared guest memory of disk '" + spec.name() + "': "
                    + e.getMessage(), e);
        } catch (RuntimeException | OutOfMemoryError e) {
            throw new DiskException("cannot allocate " + spec.guestMemoryBytes() + " bytes of guest memory for disk '"
                    + spec.name() + "': " + e.getMessage(), e);
        }
    }

    TransportInstance createTransport(DiskSpec spec, VirtioBlkDevice device, GuestMemory memory) {
        try {
            return transports.create(spec.transport(), device, memory);
        } catch (RuntimeException e) {
            throw new DiskException("cannot put disk '" + spec.name() + "' behind transport "
                    + spec.transport().label() + ": " + e.getMessage(), e);
        }
    }

    /** The GET_ID answer: the spec's serial, or the first 20 characters of the (ASCII) name. */
    static byte[] serial(DiskSpec spec) {
        String serial = spec.serial() != null ? spec.serial()
                : spec.name().substring(0, Math.min(spec.name().length(), VirtioBlk.ID_BYTES));
        return serial.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Closes what exists, in order transport (its reset waits for in-flight requests), device (its worker
     * pool), I/O threads, backend; collects failures.
     */
    static void release(TransportInstance transport, VirtioBlkDevice device, List<IoThread> threads,
            BlockBackend backend, List<Throwable> failures) {
        closeCollecting(transport, failures);
        closeCollecting(device == null ? null : device::close, failures);
        for (IoThread thread : threads) {
            closeCollecting(thread, failures);
        }
        closeCollecting(backend, failures);
    }

    /** Closes {@code resource} unless it is null; a failure is added to {@code failures}. */
    private static void closeCollecting(AutoCloseable resource, List<Throwable> failures) {
        if (resource == null) {
            return;
        }
        try {
            resource.close();
        } catch (Exception e) {
            failures.add(e);
        }
    }
}
