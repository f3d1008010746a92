package io.kickplug.blk.manager;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskSpec;

/**
 * What a disk's configuration component asks of the disk manager (same bundle): attach the disk from its
 * configuration, or take it away, without creating or deleting the configuration itself (unlike
 * {@link io.kickplug.api.blk.DiskManager#attach} and {@link io.kickplug.api.blk.DiskManager#detach}, which
 * do both for the shell).
 */
interface DiskRebuilder {

    /** Attaches the disk, finding its shared memory as it was left (a rebuild after a bundle returned). */
    DiskInfo rebuild(DiskSpec spec);

    /** Detaches the disk and deletes its shared memory; its configuration is gone or changing. */
    void release(String name);
}
