package io.kickplug.vhost.backend;

import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.List;

/**
 * Unmaps the memory a vhost-user session stopped using: memory regions dropped by REM_MEM_REG, replaced by
 * SET_MEM_TABLE or left at the end of the session (disconnect, RESET_OWNER), and the back-end's mappings of
 * an inflight area (the area itself stays with the front-end).
 *
 * <p>The order is what makes this safe, not a check at access time: the caller first resets the device,
 * which returns only when no I/O thread is inside a ring handler any more and every request in flight has
 * completed (VIRTIO 1.2 section 2.4; {@code VirtioDevice.reset}); it then drops every reference it holds to the
 * old guest memory and its queue views, and only then calls {@link #release}. When the reset failed, nothing
 * is unmapped: the buffers are left to the garbage collector, which frees them only once unreachable.
 */
final class MappingRelease {

    private static final Logger LOG = System.getLogger(MappingRelease.class.getName());

    private MappingRelease() {
    }

    /**
     * Unmaps {@code regions} and {@code area} (either may be empty or {@code null}).
     *
     * @param deviceStopped true when the device reset completed, so nothing can touch the memory any more
     * @return the number of buffers unmapped now
     */
    static int release(String name, boolean deviceStopped, List<MemoryTable.Region> regions, InflightRegion area) {
        if ((regions == null || regions.isEmpty()) && area == null) {
            return 0;
        }
        if (!deviceStopped) {
            LOG.log(Level.ERROR, "vhost-user " + name + ": the device reset failed earlier in this session; its"
                    + " memory is left to the garbage collector instead of being unmapped now");
            return 0;
        }
        int unmapped = 0;
        if (regions != null) {
            for (MemoryTable.Region r : regions) {
                unmapped += r.unmap();
            }
        }
        if (area != null && area.unmap()) {
            unmapped++;
        }
        int count = unmapped;
        LOG.log(Level.DEBUG, () -> "vhost-user " + name + ": unmapped " + count + " buffers");
        return unmapped;
    }
}
