/**
 * Completion notification (device to driver): the strategies a device uses to decide when to send
 * used-buffer notifications, the control of which strategy each queue uses, and per-queue counters.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("2.2.0")
package io.kickplug.api.notify;
