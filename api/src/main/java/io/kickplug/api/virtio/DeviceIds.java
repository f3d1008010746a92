package io.kickplug.api.virtio;

/** Virtio device IDs (VIRTIO 1.2 section 5) and Kickplug's vendor ID. */
public interface DeviceIds {
    int NET = 1;
    int BLOCK = 2;
    int CONSOLE = 3;
    /** "KPLG" as the MMIO VendorID register shows it. */
    int KICKPLUG_VENDOR = 0x474C504B;
}
