/**
 * JSON text helpers shared by the bundles that print JSON ({@code --json} of the commands, fio's and the seeds'
 * reports, the daemon's status).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package io.kickplug.api.json;
