package io.kickplug.guest.fio;

import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.GuestEngine;
import io.kickplug.guest.engine.GuestMachine;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/** {@code kp:fio} without OSGi: parse the arguments, boot the guest on the disk, run, format. */
public final class Fio {

    private Fio() {
    }

    /** Parses the arguments after the disk name; a job file is read from the file system. */
    public static FioInvocation parse(List<String> args) {
        return FioInvocation.parse(args, Fio::readJobFile);
    }

    /**
     * Boots the guest with the engine's current settings for {@code disk}, runs the jobs and returns the
     * output in the requested format.
     *
     * @throws FioFailedException when a job failed (verify, I/O error), with the output in the message
     * @throws FioOptionException when a job does not fit the disk
     */
    public static String run(GuestEngine engine, GuestPort port, VirtqueueFactory factory, String disk,
            FioInvocation invocation) {
        return run(engine, port, factory, disk, invocation, () -> -1);
    }

    /**
     * @param deviceCpu the disk's device I/O-thread CPU time so far in ns (-1 when unknown)
     */
    public static String run(GuestEngine engine, GuestPort port, VirtqueueFactory factory, String disk,
            FioInvocation invocation, java.util.function.LongSupplier deviceCpu) {
        return run(engine, port, factory, disk, invocation, deviceCpu, null);
    }

    /**
     * @param source where the guest finds the disk again when its device goes away mid-run (a bundle swap),
     *     or {@code null} to fail the run then
     */
    public static String run(GuestEngine engine, GuestPort port, VirtqueueFactory factory, String disk,
            FioInvocation invocation, java.util.function.LongSupplier deviceCpu,
            io.kickplug.guest.engine.DeviceSource source) {
        FioReport report;
        try (GuestMachine machine = source == null ? engine.boot(port, factory, engine.defaults(disk))
                : bootSurvivingRemoval(engine, port, factory, disk, source)) {
            report = FioRunner.run(machine, disk, invocation.jobs(), deviceCpu);
        }
        String output = format(report, invocation.format());
        if (invocation.html() != null) {
            FioHtml.writeFile(java.nio.file.Path.of(invocation.html()), report);
        }
        if (report.failed()) {
            throw new FioFailedException(report, output);
        }
        return output;
    }

    /** How long a boot keeps trying while the device goes away under it (a bundle swap). */
    private static final long BOOT_RETRY_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(30);

    /**
     * Boots; when the device is removed during the boot (a bundle swap), waits for it to come back and boots
     * again, within {@link #BOOT_RETRY_NANOS}.
     */
    static GuestMachine bootSurvivingRemoval(GuestEngine engine, GuestPort port, VirtqueueFactory factory,
            String disk, io.kickplug.guest.engine.DeviceSource source) {
        long deadline = System.nanoTime() + BOOT_RETRY_NANOS;
        GuestPort current = port;
        VirtqueueFactory rings = factory;
        while (true) {
            try {
                return engine.boot(current, rings, engine.defaults(disk), source);
            } catch (RuntimeException | LinkageError e) {
                // A LinkageError: classes of a bundle that was updated meanwhile (its old revision is gone).
                GuestPort failed = current;
                VirtqueueFactory failedRings = rings;
                while (true) {
                    if (System.nanoTime() - deadline >= 0) {
                        throw e;
                    }
                    current = source.port();
                    rings = source.virtqueues();
                    if (current == failed && rings == failedRings && !(e instanceof LinkageError)) {
                        throw e; // the device did not go away: the boot failed on its own
                    }
                    if (current != null && rings != null && (current != failed || rings != failedRings)) {
                        break;
                    }
                    java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
                }
            }
        }
    }

    public static String format(FioReport report, FioInvocation.OutputFormat format) {
        return format == FioInvocation.OutputFormat.JSON ? FioJson.format(report) : FioText.format(report);
    }

    static String readJobFile(String path) {
        try {
            return Files.readString(Path.of(path));
        } catch (IOException | RuntimeException e) {
            throw new FioOptionException("cannot read job file '" + path + "': " + e.getClass().getSimpleName()
                    + (e.getMessage() == null || e.getMessage().equals(path) ? "" : " " + e.getMessage()));
        }
    }
}
