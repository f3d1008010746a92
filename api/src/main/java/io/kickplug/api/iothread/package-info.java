/**
 * I/O threads: the device-side event loops that run virtqueue drain loops and completions.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.4.0")
package io.kickplug.api.iothread;
