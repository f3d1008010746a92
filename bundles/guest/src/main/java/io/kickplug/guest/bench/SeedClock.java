package io.kickplug.guest.bench;

import io.kickplug.guest.engine.VirtualTime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * How a seed runs: in real threads, or in virtual time ({@link VirtualTime}) with the charging and seed of the
 * options and the disk's ioeventfd property.
 *
 * @param reason why, for the report
 */
record SeedClock(boolean virtual, VirtualTime.Charging charging, long seed, boolean ioeventfd, String reason) {

    SeedClock withIoeventfd(boolean on) {
        return new SeedClock(virtual, charging, seed, on, reason);
    }

    SeedClock withCharging(VirtualTime.Charging c, String why) {
        return new SeedClock(virtual, c, seed, ioeventfd, reason + "; " + why);
    }

    String describe() {
        return virtual ? "virtual time (" + charging.label() + " charging, seed " + seed + "; " + reason + ")"
                : "real threads (" + reason + ")";
    }

    /** Host cores not busy with other work: processors minus the 1-minute load average (0 when unknown). */
    static double freeCores() {
        int cpus = Runtime.getRuntime().availableProcessors();
        try {
            String[] f = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return Math.max(0, cpus - Double.parseDouble(f[0]));
        } catch (IOException | RuntimeException e) {
            return 0;
        }
    }
}
