/**
 * Services through which a control plane (the QMP monitor) drives what other bundles own, without their Gogo
 * commands: the block exports of each kind ({@link io.kickplug.api.control.BlockExports}), the NBD server
 * ({@link io.kickplug.api.control.NbdServerControl}) and the throttle groups
 * ({@link io.kickplug.api.control.ThrottleControl}).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package io.kickplug.api.control;
