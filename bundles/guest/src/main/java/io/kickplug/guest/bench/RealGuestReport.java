package io.kickplug.guest.bench;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What {@code kp:bench seeds --real-guest} measured on the Linux guest: how it ran (QEMU, accelerator, kernel,
 * image, host load) and seeds 002, 003 and 004; or why it did not run.
 *
 * @param notRun why nothing ran (no QEMU, no image, no vhost-user bundle), or null
 * @param accel the accelerator QEMU ran with ("tcg" or "kvm")
 * @param qemu QEMU's version line
 * @param kernel the guest kernel's version (the image's kernel-version file)
 * @param image the image directory
 * @param runtimeNanos fio's runtime per point in the guest
 * @param rounds how many times each point ran (interleaved, in the same boot); its figures are the medians
 * @param load the host's load over the real-guest part (QEMU counts as "other processes")
 * @param seeds the seeds, in order
 */
public record RealGuestReport(String notRun, String accel, String qemu, String kernel, String image,
        long runtimeNanos, int rounds, HostLoad load, List<Seed> seeds) {

    /** The guest's vCPUs, as in the real-guest harness. */
    public static final int VCPUS = 2;

    public RealGuestReport {
        seeds = List.copyOf(seeds);
    }

    static RealGuestReport notRun(String why, String image, long runtimeNanos) {
        return new RealGuestReport(why, null, null, null, image, runtimeNanos, 0, null, List.of());
    }

    /**
     * One seed on the real guest.
     *
     * @param notRun why this seed did not run (QEMU failed, the guest stalled), or null
     * @param measured the figure comparable to the published one, one line
     * @param directionMatches the published direction? null when not run
     * @param magnitudeRatio the effect over the published one, in the simulated seed's measure
     */
    public record Seed(String id, String title, String notRun, List<SeedResult.Point> points, String measured,
            Map<String, Double> measuredFigures, Boolean directionMatches, double magnitudeRatio, List<String> notes) {

        public Seed {
            points = List.copyOf(points);
            measuredFigures = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(measuredFigures));
            notes = List.copyOf(notes);
        }

        static Seed notRun(String id, String title, String why) {
            return new Seed(id, title, why, List.of(), "not run: " + why, Map.of(), null, Double.NaN, List.of());
        }

        /** Same sign and {@code 0.5 <= magnitudeRatio <= 2}; null when not run or not measurable. */
        public Boolean withinTwoX() {
            return SeedVerdicts.withinTwoX(directionMatches, magnitudeRatio);
        }

        public String verdict() {
            return SeedVerdicts.verdict(directionMatches);
        }
    }
}
