/**
 * Commands that parse their own arguments: their options as data ({@link io.kickplug.api.command.OptionTable}),
 * which the parser checks names against and the command reference (docs/reference/commands.md) is generated from.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package io.kickplug.api.command;
