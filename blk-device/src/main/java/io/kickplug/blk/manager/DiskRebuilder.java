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

    /**
     * Attaches the disk, finding its shared memory as it was left (a rebuild after a bundle returned), with the
     * settings of its configuration ({@link DiskSettings}) applied before anyone sees it attached.
     *
     * @param props the configuration's properties (the spec was made from them)
     */
    DiskInfo rebuild(DiskSpec spec, java.util.Map<String, ?> props);

    /**
     * Applies the settings of the disk's configuration ({@link DiskSettings}) to the running disk, each where it
     * differs, through its live path (no re-attach): after a rebuild, or when only they changed.
     *
     * @param props the configuration's properties as delivered; the manager may read newer ones
     */
    void applyConfigured(String name, java.util.Map<String, ?> props);

    /** Detaches the disk and deletes its shared memory; its configuration is gone or changing. */
    void release(String name);

    /**
     * Detaches the disk because its configuration was deleted, unless a configuration of that name exists
     * again: ConfigAdmin tells of a deletion asynchronously, and by then {@code kp:detach d; kp:attach d} may
     * have attached a new disk of the same name (with a new configuration) that this deletion must not take.
     */
    void releaseDeleted(String name);

    /**
     * The disk's backend kind has no factory now (its bundle is not active yet): {@code retry} runs once, on
     * another thread, when a factory of that kind arrives, unless {@link #cancelWait} came first.
     *
     * @return false when a factory of the kind is there (the attach failed for another reason)
     */
    default boolean waitForBackend(DiskSpec spec, Runnable retry) {
        return false;
    }

    /** The waiting configuration went (deleted, changed, or its component stopped). */
    default void cancelWait(String name) {
    }
}
