package io.kickplug.guest.blk;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.VirtioFeatures;
import java.time.Duration;

/**
 * How the simulated virtio-blk driver boots.
 *
 * @param supportedFeatures features the driver accepts when offered
 * @param maxQueues most request queues to set up (fewer when the device has fewer)
 * @param totalSlots request slots over all queues (spread evenly, at most a queue's size per queue)
 * @param maxDataBytes the data buffer of each slot, a positive multiple of 512
 * @param timeout bound of every wait: reset completion and request completion
 */
public record BlkDriverConfig(long supportedFeatures, int maxQueues, int totalSlots, int maxDataBytes,
        Duration timeout) {

    /** What the driver understands: VERSION_1, INDIRECT_DESC, EVENT_IDX, SEG_MAX, BLK_SIZE, FLUSH, MQ, RO. */
    public static final long SUPPORTED_FEATURES = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC
            | VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_SEG_MAX | VirtioBlk.F_BLK_SIZE | VirtioBlk.F_FLUSH
            | VirtioBlk.F_MQ | VirtioBlk.F_RO;

    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    public BlkDriverConfig {
        if (maxQueues < 1) {
            throw new IllegalArgumentException("maxQueues must be at least 1: " + maxQueues);
        }
        if (totalSlots < 1) {
            throw new IllegalArgumentException("totalSlots must be at least 1: " + totalSlots);
        }
        if (maxDataBytes <= 0 || maxDataBytes % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("maxDataBytes must be a positive multiple of 512: " + maxDataBytes);
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
    }

    public static BlkDriverConfig of(int totalSlots, int maxDataBytes) {
        return new BlkDriverConfig(SUPPORTED_FEATURES, Integer.MAX_VALUE, totalSlots, maxDataBytes, DEFAULT_TIMEOUT);
    }

    public BlkDriverConfig withFeatures(long features) {
        return new BlkDriverConfig(features, maxQueues, totalSlots, maxDataBytes, timeout);
    }

    public BlkDriverConfig withTimeout(Duration newTimeout) {
        return new BlkDriverConfig(supportedFeatures, maxQueues, totalSlots, maxDataBytes, newTimeout);
    }

    public BlkDriverConfig withMaxQueues(int queues) {
        return new BlkDriverConfig(supportedFeatures, queues, totalSlots, maxDataBytes, timeout);
    }
}
