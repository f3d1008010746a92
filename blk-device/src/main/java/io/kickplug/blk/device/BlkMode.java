package io.kickplug.blk.device;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.request.BlkLimits;

/**
 * What the current feature negotiation decided for one device, and its write cache (VIRTIO 1.2 sections
 * 5.2.3, 5.2.5.2, 5.2.6.2), shared by the device (configuration space), the parser (which request types are
 * allowed) and the executor (whether a write must be flushed before it completes). Thread-safe.
 *
 * <p>The write cache follows QEMU: with VIRTIO_BLK_F_CONFIG_WCE negotiated the driver-writable
 * {@code writeback} field decides; without it, the cache is on exactly when VIRTIO_BLK_F_FLUSH was
 * negotiated (a driver that cannot flush gets writethrough, so its completed writes are stable).
 */
public final class BlkMode {

    private final BlkLimits limits;
    private volatile long features;
    private volatile boolean writeback = true;

    /** A device whose driver has negotiated nothing yet. */
    public BlkMode(BlkLimits limits) {
        this.limits = limits;
    }

    /** A fixed mode: {@code features} negotiated, default limits. */
    public static BlkMode negotiated(long features) {
        BlkMode mode = new BlkMode(BlkLimits.DEFAULTS);
        mode.negotiate(features);
        return mode;
    }

    /** The limits the configuration space announces and the parser enforces. */
    public BlkLimits limits() {
        return limits;
    }

    /** The negotiated features (0 before a negotiation). */
    public long features() {
        return features;
    }

    /**
     * A new negotiation: remembers the features and sets {@code writeback} to its initial value, 1, or 0
     * when CONFIG_WCE was negotiated without FLUSH (5.2.5.2).
     */
    public void negotiate(long negotiatedFeatures) {
        synchronized (this) {
            features = negotiatedFeatures;
            writeback = !(has(VirtioBlk.F_CONFIG_WCE) && !has(VirtioBlk.F_FLUSH));
        }
    }

    /** Like {@link #negotiate}, unless exactly these features are already negotiated (keeps the driver's
     * {@code writeback} written between FEATURES_OK and DRIVER_OK). */
    public void confirm(long negotiatedFeatures) {
        synchronized (this) {
            if (features != negotiatedFeatures) {
                negotiate(negotiatedFeatures);
            }
        }
    }

    /** Back to the state before any negotiation (device reset, 2.4). */
    public void reset() {
        synchronized (this) {
            features = 0;
            writeback = true;
        }
    }

    /**
     * The driver wrote {@code writeback} (5.2.4). Accepted only when CONFIG_WCE was negotiated.
     *
     * @return whether the write was accepted
     */
    public boolean setWriteback(boolean on) {
        synchronized (this) {
            if (!has(VirtioBlk.F_CONFIG_WCE)) {
                return false;
            }
            writeback = on;
            return true;
        }
    }

    /** Whether completed writes may sit in a volatile cache until a FLUSH; false: writethrough. */
    public boolean writeCache() {
        return has(VirtioBlk.F_CONFIG_WCE) ? writeback : has(VirtioBlk.F_FLUSH);
    }

    private boolean has(long feature) {
        return (features & feature) != 0;
    }
}
