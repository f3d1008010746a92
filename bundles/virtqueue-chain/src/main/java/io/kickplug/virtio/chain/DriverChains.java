package io.kickplug.virtio.chain;

import io.kickplug.api.virtio.BufferSpec;
import java.util.List;

/** The argument rules of {@code DriverQueue.add} that the split and packed driver views share. */
public final class DriverChains {
    private DriverChains() {
    }

    /**
     * Checks a chain the driver is about to add and decides whether it goes into an indirect table.
     *
     * @param orderSection the section that puts device-writable buffers after device-readable ones
     * @return true to put the chain in an indirect table
     * @throws IllegalArgumentException for an empty chain, a null token, writable before readable, or an
     *     indirect chain that cannot be one
     */
    public static boolean check(List<BufferSpec> buffers, Object token, boolean indirect, boolean indirectAllowed,
            int maxIndirect, String orderSection) {
        int n = buffers.size();
        if (n == 0) {
            throw new IllegalArgumentException("a chain needs at least one buffer");
        }
        if (token == null) {
            throw new IllegalArgumentException("token must not be null");
        }
        boolean seenWritable = false;
        for (BufferSpec b : buffers) {
            if (b.deviceWritable()) {
                seenWritable = true;
            } else if (seenWritable) {
                throw new IllegalArgumentException("readable buffers must come before writable ones (" + orderSection
                        + ")");
            }
        }
        boolean useIndirect = indirect && indirectAllowed && n > 1 && n <= maxIndirect;
        if (indirect && !useIndirect && (!indirectAllowed || n > maxIndirect)) {
            throw new IllegalArgumentException(!indirectAllowed ? "indirect descriptors were not negotiated"
                    : "chain of " + n + " buffers exceeds the indirect table size " + maxIndirect);
        }
        return useIndirect;
    }
}
