/**
 * Virtio device model: devices, device-side and driver-side virtqueue views (split and packed), descriptor chains, feature and status constants (VIRTIO 1.2).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("2.4.0")
package io.kickplug.api.virtio;
