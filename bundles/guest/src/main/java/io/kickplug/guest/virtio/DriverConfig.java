package io.kickplug.guest.virtio;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.VirtioFeatures;
import java.time.Duration;

/**
 * How the guest's virtio-blk driver sets a device up.
 *
 * @param supportedFeatures features the driver accepts when offered
 * @param maxQueues most request queues to set up (fewer when the device has fewer); Linux: nr_cpu_ids
 * @param slotsPerQueue request slots (tags, requests in flight at most) per queue; 0 for the queue size, as
 *     Linux's virtio_blk (capped at the queue size either way)
 * @param maxRequestBytes largest request the driver builds; caps seg_max, so the indirect tables stay small
 * @param pollQueues Linux's virtio_blk {@code poll_queues}: the last ones of the queues (at most all but one)
 *     get no interrupt, their callbacks off for good
 * @param timeout bound of every wait of the driver (reset completion, a device that does not come back)
 */
public record DriverConfig(long supportedFeatures, int maxQueues, int slotsPerQueue, int maxRequestBytes,
        int pollQueues, Duration timeout) {

    /**
     * What the driver understands: VERSION_1, INDIRECT_DESC, EVENT_IDX, RING_PACKED (when its rings can be
     * packed), SEG_MAX, BLK_SIZE, FLUSH, MQ, RO.
     */
    public static final long SUPPORTED_FEATURES = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_INDIRECT_DESC
            | VirtioFeatures.RING_EVENT_IDX | VirtioFeatures.RING_PACKED | VirtioBlk.F_SEG_MAX | VirtioBlk.F_BLK_SIZE | VirtioBlk.F_FLUSH
            | VirtioBlk.F_MQ | VirtioBlk.F_RO;

    public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(30);

    /** Linux's BLK_DEF_MAX_SECTORS (2560 sectors). */
    public static final int DEFAULT_MAX_REQUEST_BYTES = 2560 * VirtioBlk.SECTOR_SIZE;

    public DriverConfig {
        if (maxQueues < 1) {
            throw new IllegalArgumentException("maxQueues must be at least 1: " + maxQueues);
        }
        if (slotsPerQueue < 0) {
            throw new IllegalArgumentException("slots per queue " + slotsPerQueue + " must not be negative");
        }
        if (maxRequestBytes <= 0 || maxRequestBytes % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("max request size " + maxRequestBytes
                    + " must be a positive multiple of 512");
        }
        if (pollQueues < 0) {
            throw new IllegalArgumentException("poll queues " + pollQueues + " must not be negative");
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
    }
}
