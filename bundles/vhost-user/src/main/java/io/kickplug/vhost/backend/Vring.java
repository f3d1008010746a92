package io.kickplug.vhost.backend;

import io.kickplug.api.virtio.DeviceQueue;
import java.io.FileDescriptor;

/** What the front-end told the backend about one virtqueue. Owned by the message thread, except {@link #call}. */
final class Vring {

    final int index;
    /** Queue size from SET_VRING_NUM; 0 until set. */
    int num;
    /**
     * last_avail_idx from SET_VRING_BASE, or saved when the device stopped. For a packed ring the position with
     * the avail wrap counter in bit 15 (vhost-user's encoding).
     */
    int nextAvail;
    /**
     * The used index saved when the device stopped, or for a packed ring the one SET_VRING_BASE carried in bits
     * 16-31 (position, used wrap counter in bit 31); -1: read used.idx from guest memory at start (split).
     */
    int nextUsed = -1;
    boolean addressesSet;
    long descUser;
    long availUser;
    long usedUser;
    /** SET_VRING_ADDR's VHOST_VRING_F_LOG and log_guest_addr (the used ring's guest address, for dirty logging). */
    boolean log;
    long logGuestAddr;
    /** A kick descriptor arrived since the last GET_VRING_BASE / reset (vhost-user "started"). */
    boolean started;
    boolean enabled;
    FileDescriptor kick;
    /** The interrupt: an eventfd, or {@code null} (none yet, or NOFD: never notify). */
    volatile EventFd call;
    /** SET_VRING_CALL came with the NOFD flag: the driver polls this queue. */
    volatile boolean callNoFd;
    volatile EventFd err;
    /** The device view while the device runs this queue. */
    DeviceQueue view;
    /** Guest-physical addresses of the available and used rings of the last start (debug log), or -1. */
    long availGpa = -1;
    long usedGpa = -1;
    /** Kicks and calls since the last start, for the debug log (which shows the first ones of each start). */
    final java.util.concurrent.atomic.AtomicLong kicksSinceStart = new java.util.concurrent.atomic.AtomicLong();
    final java.util.concurrent.atomic.AtomicLong callsSinceStart = new java.util.concurrent.atomic.AtomicLong();

    Vring(int index) {
        this.index = index;
    }

    boolean configured() {
        return num > 0 && addressesSet;
    }
}
