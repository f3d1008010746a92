package io.kickplug.api.virtio;

/** Device status bits (VIRTIO 1.2 section 2.1). */
public interface DeviceStatus {
    int ACKNOWLEDGE = 1;
    int DRIVER = 2;
    int DRIVER_OK = 4;
    int FEATURES_OK = 8;
    int DEVICE_NEEDS_RESET = 64;
    int FAILED = 128;
}
