package io.kickplug.guest.bench;

import io.kickplug.api.lockstat.LockStats;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.guest.engine.StandardGuestEngine;
import io.kickplug.shell.testkit.GogoShell;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;

/** The benchmark tests' Gogo set-up. */
final class BenchShells {

    private BenchShells() {
    }

    /** Registers kp:bench on {@code shell}: {@code registry}'s disks and notification control, {@code engine}. */
    static void addBench(GogoShell shell, DiskRegistry registry, StandardGuestEngine engine, LockStats lockStats) {
        shell.add("kp", new BenchCommand(registry, new VirtqueueFactoryComponent(), engine, lockStats, registry),
                "bench");
    }
}
