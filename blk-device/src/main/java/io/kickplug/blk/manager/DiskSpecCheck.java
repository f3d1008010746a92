package io.kickplug.blk.manager;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.QueueLayout;
import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/** The checks of a {@link DiskSpec} that need no registry state: names, sizes, counts, the serial. */
final class DiskSpecCheck {

    private static final Pattern NAME = Pattern.compile("[A-Za-z0-9._-]{1,64}");
    private static final int MAX_WORKERS = 256;

    private DiskSpecCheck() {
    }

    /** Checks every field of {@code spec}. */
    static void check(DiskSpec spec) {
        if (spec == null) {
            throw new DiskException("no disk spec given");
        }
        String name = spec.name();
        if (name == null || !NAME.matcher(name).matches()) {
            throw new DiskException("invalid disk name '" + name
                    + "': use 1 to 64 letters, digits, '.', '_' or '-'");
        }
        BackendSpec backend = spec.backend();
        if (backend == null || backend.kind() == null) {
            throw new DiskException("disk '" + name + "' has no backend kind");
        }
        if ("memory".equals(backend.kind()) && backend.path() != null) {
            // Its shared-memory file is the registry's to name (setSharedMemory), never the caller's.
            throw new DiskException("a memory disk takes no path (got '" + backend.path() + "')");
        }
        long size = backend.sizeBytes();
        // A file backend may take its size from the file (size 0); every other size is checked here.
        boolean sizeFromFile = size == 0 && DiskConfig.sizedByBackend(backend.kind());
        if (!sizeFromFile && (size <= 0 || size % VirtioBlk.SECTOR_SIZE != 0)) {
            throw new DiskException("disk size " + size + " is not a positive multiple of 512 bytes");
        }
        if (spec.numQueues() < 1 || spec.numQueues() > DiskSpec.MAX_QUEUES) {
            throw new DiskException("number of queues " + spec.numQueues() + " is not in 1.." + DiskSpec.MAX_QUEUES);
        }
        int queueSize = spec.queueSize();
        if (queueSize < 2 || queueSize > QueueLayout.MAX_SIZE || Integer.bitCount(queueSize) != 1) {
            throw new DiskException("queue size " + queueSize + " is not a power of two in 2.." + QueueLayout.MAX_SIZE);
        }
        if (spec.ioThreads() < 1 || spec.ioThreads() > DiskSpec.MAX_QUEUES) {
            throw new DiskException("number of I/O threads " + spec.ioThreads() + " is not in 1.."
                    + DiskSpec.MAX_QUEUES);
        }
        if (spec.workers() < 1 || spec.workers() > MAX_WORKERS) {
            throw new DiskException("number of workers " + spec.workers() + " is not in 1.." + MAX_WORKERS);
        }
        if (spec.serial() != null && spec.serial().getBytes(StandardCharsets.UTF_8).length > VirtioBlk.ID_BYTES) {
            throw new DiskException("serial '" + spec.serial() + "' is longer than " + VirtioBlk.ID_BYTES + " bytes");
        }
        if (spec.transport() == null) {
            throw new DiskException("disk '" + name + "' has no transport");
        }
        if (spec.guestMemoryBytes() <= 0) {
            throw new DiskException("guest memory size " + spec.guestMemoryBytes() + " must be positive");
        }
    }
}
