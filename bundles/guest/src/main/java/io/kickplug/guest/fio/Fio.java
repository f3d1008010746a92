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
        FioReport report;
        try (GuestMachine machine = engine.boot(port, factory, engine.defaults(disk))) {
            report = FioRunner.run(machine, disk, invocation.jobs(), deviceCpu);
        }
        String output = format(report, invocation.format());
        if (report.failed()) {
            throw new FioFailedException(report, output);
        }
        return output;
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
