/**
 * Block devices: backends, disk specifications and the disk manager service.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.9.0")
package io.kickplug.api.blk;
