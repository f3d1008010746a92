/**
 * Polling: the policy that sizes an I/O thread's poll window (QEMU's adaptive polling) and a disk's polling
 * settings and counters.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package io.kickplug.api.poll;
