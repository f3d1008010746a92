package io.kickplug.blk.manager;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.blk.notify.NotifierRegistry;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** A disk's completion-notification strategy switch: its device and its exported devices, queue by queue. */
final class StrategySwitch {

    private static final Logger LOG = System.getLogger(DiskRegistry.class.getName());
    /** How long {@link Pending#await} waits for the queues to switch before it answers. */
    private static final long SWITCH_WAIT_MILLIS = 2000;

    private StrategySwitch() {
    }

    /**
     * A switch configured on the devices: the latches of the active queues that switch at their next safe point.
     */
    record Pending(String name, VirtioBlkDevice device, List<VirtioBlkDevice> exported, String strategy, int queue,
            List<CountDownLatch> latches) {

        /** Waits (briefly) until the active queues have switched; returns the counters of the queues set. */
        List<QueueCounters> await() {
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(SWITCH_WAIT_MILLIS);
            try {
                for (CountDownLatch latch : latches) {
                    if (!latch.await(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                        break; // the counters will show the queue still on its old strategy
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            LOG.log(Level.INFO, "disk " + name + (queue < 0 ? "" : " queue " + queue) + ": completion notifier "
                    + strategy);
            List<QueueCounters> all = device.queueCounters();
            if (queue < 0) {
                return all;
            }
            if (queue < all.size()) {
                return List.of(all.get(queue));
            }
            List<QueueCounters> exportedRows = new ArrayList<>();
            for (VirtioBlkDevice e : exported) {
                if (queue < e.queueCount()) {
                    exportedRows.add(e.queueCounters().get(queue));
                }
            }
            return exportedRows;
        }
    }

    /**
     * Sets {@code strategy} on queue {@code queue} (all queues when negative) of {@code device} and of the disk's
     * {@code exported} devices, without waiting for the active queues to switch.
     *
     * @throws DiskException for a queue no device has or a malformed name, before anything changes
     */
    static Pending configure(String name, VirtioBlkDevice device, List<VirtioBlkDevice> exported, String strategy,
            int queue) {
        // The disk's exported devices (vhost-user) follow the same configuration, queue by queue; a queue
        // index only an export has (an export with more queues than the disk) configures that export.
        int queues = device.queueCount();
        for (VirtioBlkDevice e : exported) {
            queues = Math.max(queues, e.queueCount());
        }
        if (queue >= queues) {
            throw new DiskException("disk '" + name + "' has queues 0.." + (queues - 1) + ", not " + queue);
        }
        // Checks the name before anything changes.
        String checked = NotifierRegistry.checkName(strategy);
        List<CountDownLatch> latches = new ArrayList<>();
        if (queue < device.queueCount()) {
            latches.addAll(device.setStrategy(checked, queue));
        }
        for (VirtioBlkDevice e : exported) {
            if (queue < e.queueCount()) {
                latches.addAll(e.setStrategy(checked, queue));
            }
        }
        return new Pending(name, device, exported, checked, queue, latches);
    }

    /**
     * Configures each queue of {@code device} whose strategy differs from {@code plan}'s (a disk rebuilt, an export
     * made, a configuration changed); queues already on theirs are left alone (no switch, no counter).
     *
     * @return latches counted down once each active queue set has switched
     */
    static List<CountDownLatch> apply(QueueStrategies plan, VirtioBlkDevice device) {
        List<CountDownLatch> latches = new ArrayList<>();
        List<QueueCounters> now = device.queueCounters();
        for (int q = 0; q < device.queueCount(); q++) {
            if (!plan.of(q).equals(now.get(q).configured())) {
                latches.addAll(device.setStrategy(plan.of(q), q));
            }
        }
        return latches;
    }
}
