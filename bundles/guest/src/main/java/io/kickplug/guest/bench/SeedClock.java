package io.kickplug.guest.bench;

import io.kickplug.guest.engine.ModelCosts;
import io.kickplug.guest.engine.Charging;
import io.kickplug.guest.engine.VirtualTime;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Locale;

/**
 * How a seed runs: in real threads, or in virtual time ({@link VirtualTime}) with the charging and seed of the
 * options and the disk's ioeventfd property.
 *
 * @param reason why, for the report
 * @param pinCpus the host CPUs virtual time's actor threads run on alone ({@link VirtualTime#pinned}), or null;
 *     kept for virtual time with measured charging only (model charging reads no clock)
 */
record SeedClock(boolean virtual, Charging charging, long seed, boolean ioeventfd, String reason,
        String pinCpus) {

    SeedClock {
        pinCpus = virtual && charging == Charging.MEASURED ? pinCpus : null;
    }

    SeedClock withIoeventfd(boolean on) {
        return new SeedClock(virtual, charging, seed, on, reason, pinCpus);
    }

    SeedClock withCharging(Charging c, String why) {
        return new SeedClock(virtual, c, seed, ioeventfd, reason + "; " + why, pinCpus);
    }

    /**
     * Virtual time when asked, or (auto) when the seed's vCPUs outnumber the host's free cores.
     *
     * @param seedId the seed, whose charging {@link SeedsOptions#chargingOf} says
     * @param pinCpus where virtual time's actors run ({@link SeedsOptions#pinCpus}), or null
     */
    static SeedClock of(SeedsOptions o, String seedId, double freeCores, String pinCpus, int vcpus) {
        String free = String.format(Locale.ROOT, "%.1f", freeCores);
        Charging c = o.chargingOf(seedId);
        SeedClock clock = switch (o.clock()) {
            case SeedsOptions.VIRTUAL -> new SeedClock(true, c, o.seed(), true, "--clock virtual", pinCpus);
            case SeedsOptions.REAL -> new SeedClock(false, c, o.seed(), true, "--clock real", pinCpus);
            default -> new SeedClock(vcpus > freeCores, c, o.seed(), true, vcpus
                    + (vcpus > freeCores ? " vCPUs > " : " vCPUs <= ") + free + " free host cores", pinCpus);
        };
        return clock.virtual() ? clock.withReason(o.chargingReason(seedId)) : clock;
    }

    SeedClock withReason(String why) {
        return new SeedClock(virtual, charging, seed, ioeventfd, reason + "; " + why, pinCpus);
    }

    /**
     * The system property that replaces some of the model's costs for a sensitivity run
     * ({@code -Dkickplug.model.costs=trackedSectionNs=200,coScheduleNs=0}; {@link ModelCosts#with}).
     */
    static final String COSTS_PROPERTY = "kickplug.model.costs";

    /** The virtual time's costs: the defaults, with what {@link #COSTS_PROPERTY} replaces. */
    static ModelCosts modelCosts() {
        return ModelCosts.DEFAULTS.with(System.getProperty(COSTS_PROPERTY));
    }

    String describe() {
        return describe(1);
    }

    /** As {@link #describe()}, naming the tie-break seed of each of {@code rounds} rounds (--seed, +1 per round). */
    String describe(int rounds) {
        return virtual ? "virtual time (" + charging.label() + " charging, seed " + seed
                + (rounds > 1 ? " (" + seed + "-" + (seed + rounds - 1) + ", one per round)" : "")
                + (pinCpus == null ? "" : ", actors alone on CPU " + pinCpus + " on the wall clock") + "; " + reason
                + overridden() + ")" : "real threads (" + reason + ")";
    }

    /** "; model costs replaced: ..." when {@link #COSTS_PROPERTY} is set, else "". */
    private static String overridden() {
        String o = System.getProperty(COSTS_PROPERTY);
        return o == null || o.isBlank() ? "" : "; model costs replaced: " + o.trim();
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
