package io.kickplug.blk.backend;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.VirtioBlk;

/** Checks shared by the backend factories. */
final class Backends {

    private Backends() {
    }

    /** The spec's size, when it is a positive multiple of 512. */
    static long checkedSize(BackendSpec spec) {
        long size = spec.sizeBytes();
        if (size <= 0 || size % VirtioBlk.SECTOR_SIZE != 0) {
            throw new DiskException(spec.kind() + " disk size " + size + " is not a positive multiple of 512 bytes");
        }
        if (spec.path() != null) {
            throw new DiskException("a " + spec.kind() + " disk takes no path (got '" + spec.path() + "')");
        }
        return size;
    }
}
