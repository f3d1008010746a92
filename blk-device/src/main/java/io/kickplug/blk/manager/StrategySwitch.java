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
    /** How long {@link #apply} waits for the queues to switch before it answers. */
    private static final long SWITCH_WAIT_MILLIS = 2000;

    private StrategySwitch() {
    }

    /**
     * Sets {@code strategy} on queue {@code queue} (all queues when negative) of {@code device} and of the disk's
     * {@code exported} devices, waits (briefly) until the active queues have switched, and returns the counters of
     * the queues it set.
     */
    static List<QueueCounters> apply(String name, VirtioBlkDevice device, List<VirtioBlkDevice> exported,
            String strategy, int queue) {
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
        NotifierRegistry.checkName(strategy);
        List<CountDownLatch> latches = new ArrayList<>();
        if (queue < device.queueCount()) {
            latches.addAll(device.setStrategy(strategy, queue));
        }
        List<QueueCounters> exportedRows = new ArrayList<>();
        for (VirtioBlkDevice e : exported) {
            if (queue < e.queueCount()) {
                latches.addAll(e.setStrategy(strategy, queue));
            }
        }
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
                + strategy.trim());
        List<QueueCounters> all = device.queueCounters();
        if (queue < 0) {
            return all;
        }
        if (queue < all.size()) {
            return List.of(all.get(queue));
        }
        for (VirtioBlkDevice e : exported) {
            if (queue < e.queueCount()) {
                exportedRows.add(e.queueCounters().get(queue));
            }
        }
        return exportedRows;
    }
}
