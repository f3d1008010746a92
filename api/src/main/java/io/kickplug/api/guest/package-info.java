/**
 * The simulated guest: workloads that drive an attached disk through its transport only.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("2.1.0")
package io.kickplug.api.guest;
