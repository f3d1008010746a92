/**
 * Lock statistics in the columns of Linux's /proc/lock_stat: {@link io.kickplug.api.lockstat.LockCounters} (the
 * one implementation of the counters), each instrumented bundle's {@link io.kickplug.api.lockstat.LockStatSource}
 * and the merged {@link io.kickplug.api.lockstat.LockStats} table behind {@code kp:lockstat}.
 */
@org.osgi.annotation.bundle.Export
@org.osgi.annotation.versioning.Version("1.0.0")
package io.kickplug.api.lockstat;
