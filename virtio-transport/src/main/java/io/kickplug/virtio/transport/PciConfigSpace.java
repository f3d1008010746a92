package io.kickplug.virtio.transport;

import static io.kickplug.virtio.pci.PciRegisters.*;

/**
 * The bytes of a 4 KiB PCI configuration space with a per-bit write mask (as QEMU models it): a guest
 * write changes only the writable bits, so BAR sizing (PCI Local Bus 3.0 section 6.2.5.1) falls out of
 * the mask. Live fields and side effects belong to the owner. Not thread-safe: the owner serialises.
 */
final class PciConfigSpace {
    private static final int FIRST_CAPABILITY = 0x40;
    private static final int CAPABILITY_LIMIT = 0x100;

    private final byte[] bytes = new byte[CONFIG_SPACE_SIZE];
    private final byte[] writable = new byte[CONFIG_SPACE_SIZE];
    private int nextCapability = FIRST_CAPABILITY;
    private int lastCapability;

    int get(int offset, int width) {
        int v = 0;
        for (int i = width - 1; i >= 0; i--) {
            v = (v << 8) | (bytes[offset + i] & 0xff);
        }
        return v;
    }

    /** Sets a field as the device (no write mask). */
    void set(int offset, int width, int value) {
        for (int i = 0; i < width; i++) {
            bytes[offset + i] = (byte) (value >>> (8 * i));
        }
    }

    /** Marks bits of a field writable by the guest. */
    void writableBits(int offset, int width, int mask) {
        for (int i = 0; i < width; i++) {
            writable[offset + i] = (byte) (mask >>> (8 * i));
        }
    }

    /** A guest write: changes the writable bits of each byte, nothing else. */
    void guestWrite(int offset, int width, long value) {
        for (int i = 0; i < width; i++) {
            int m = writable[offset + i];
            bytes[offset + i] = (byte) ((bytes[offset + i] & ~m) | ((int) (value >>> (8 * i)) & m));
        }
    }

    /**
     * Appends a capability of {@code length} bytes to the list (dword aligned) and returns its offset;
     * sets the capabilities pointer and the Capabilities List status bit for the first one.
     */
    int addCapability(int id, int length) {
        int at = nextCapability;
        if (at + length > CAPABILITY_LIMIT) {
            throw new IllegalStateException("capabilities do not fit in the PCI configuration header");
        }
        set(at, 1, id);
        set(at + CAP_NEXT, 1, 0);
        if (lastCapability == 0) {
            set(CAPABILITIES_POINTER, 1, at);
            set(STATUS, 2, get(STATUS, 2) | STATUS_CAPABILITIES_LIST);
        } else {
            set(lastCapability + CAP_NEXT, 1, at);
        }
        lastCapability = at;
        nextCapability = (at + length + 3) & ~3;
        return at;
    }
}
