package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * Waiting, bounded, for the disk manager and for disks being rebuilt: right after a bundle update the
 * services come back synchronously but ConfigAdmin hands the disks' configurations over asynchronously, so a
 * command that runs next may find a disk configured and not yet attached.
 */
final class DiskManagerWait {

    static final String ABSENT = "the disk manager is not available (bundle io.kickplug.blk, or the "
            + "io.kickplug.virtio.transport or io.kickplug.virtqueue.split bundle it needs, is not active)";
    private static final long STEP_MILLIS = 10;

    private DiskManagerWait() {
    }

    /** The attached disks and the configured ones not attached (yet). */
    record Listing(List<DiskInfo> attached, List<String> pending) {
    }

    /** The disk manager, waiting up to {@code millis} for one to appear; {@code null} when none did. */
    static DiskManager await(Supplier<DiskManager> current, long millis) {
        long deadline = System.nanoTime() + millis * 1_000_000;
        DiskManager dm;
        while ((dm = current.get()) == null && System.nanoTime() - deadline < 0) {
            pause();
        }
        return dm;
    }

    /** Lists the disks, waiting up to {@code millis} for configured disks to be attached. */
    static Listing awaitConfigured(Supplier<DiskManager> current, long millis) {
        long deadline = System.nanoTime() + millis * 1_000_000;
        while (true) {
            DiskManager dm = current.get();
            if (dm == null) {
                if (System.nanoTime() - deadline >= 0) {
                    throw new IllegalStateException(ABSENT);
                }
                pause();
                continue;
            }
            List<DiskInfo> attached = dm.list();
            List<String> pending = new ArrayList<>(dm.configuredDisks());
            attached.forEach(d -> pending.remove(d.name()));
            if (pending.isEmpty() || System.nanoTime() - deadline >= 0) {
                return new Listing(attached, pending);
            }
            pause();
        }
    }

    private static void pause() {
        pause(STEP_MILLIS, "the disk manager");
    }

    /**
     * One step of a bounded poll: the services and ConfigAdmin signal nothing a command could wait on. An
     * interrupt ends the command ("interrupted while waiting for WHAT").
     */
    static void pause(long millis, String what) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while waiting for " + what);
        }
    }
}
