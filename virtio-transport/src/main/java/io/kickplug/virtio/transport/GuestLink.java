package io.kickplug.virtio.transport;

import io.kickplug.api.transport.GuestInterrupts;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A transport's link to the guest's interrupt controller, and the one removal notice it owes the guest when
 * the host closes the transport ({@link GuestInterrupts#deviceRemoved}).
 *
 * <p>A guest may connect while the transport is being closed (it found the port just before a bundle update
 * closed it, and re-probes it): it is told at once then, so it never drives a device that is gone without
 * knowing. The close writes {@code closed} and then takes the connected guest; a connect writes the guest
 * and then reads {@code closed}. Both are volatile accesses, so at least one side sees the other, and the
 * {@code getAndSet} makes exactly one of them deliver the notice.
 */
final class GuestLink {
    private final AtomicReference<GuestInterrupts> guest = new AtomicReference<>();
    private volatile boolean closed;

    /** The connected guest, or {@code null}. */
    GuestInterrupts get() {
        return guest.get();
    }

    /** Connects (or with {@code null} disconnects) the guest; one connected after the close is told at once. */
    void connect(GuestInterrupts interrupts) {
        guest.set(interrupts);
        if (closed) {
            notifyRemoved();
        }
    }

    /** The transport is closed and its device reset: the guest connected now, or later, is told once. */
    void close() {
        closed = true;
        notifyRemoved();
    }

    private void notifyRemoved() {
        GuestInterrupts g = guest.getAndSet(null);
        if (g != null) {
            g.deviceRemoved();
        }
    }
}
