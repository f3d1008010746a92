package io.kickplug.guest.engine;

import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtqueueFactory;

/**
 * Where a simulated guest finds its device again after the device went away (a bundle serving it stopped or
 * is being updated): the disk's current port and the current ring factory, each {@code null} while absent.
 */
public interface DeviceSource {

    /** The disk's port now, or {@code null} when the disk is not attached (yet). */
    GuestPort port();

    /** The bound virtqueue factory, or {@code null} while none is. */
    VirtqueueFactory virtqueues();
}
