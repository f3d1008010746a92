/**
 * Guest memory: the untrusted, little-endian address space shared by a guest and a device. Every access is bounds-checked.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package io.kickplug.api.memory;
