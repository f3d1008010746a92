/**
 * Text forms shared by the bundles: JSON string literals (for {@code --json} of the commands, fio's and the seeds'
 * reports, the daemon's status) and the labels of the api's enumerations (for commands and configurations alike).
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.1.0")
package io.kickplug.api.text;
