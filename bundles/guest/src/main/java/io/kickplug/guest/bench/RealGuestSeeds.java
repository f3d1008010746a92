package io.kickplug.guest.bench;

import io.kickplug.guest.fio.TextFiles;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

/**
 * {@code kp:bench seeds --real-guest[-only]}: the simulated seeds (unless only the real guest is asked for), then
 * seeds 002, 003 and 004 on the real guest; the text report gets the real-guest section, the JSON file a
 * {@code real_guest} object, the HTML page a "Real Linux guest" section.
 */
final class RealGuestSeeds {

    private RealGuestSeeds() {
    }

    /**
     * @param simulated the simulated seeds' bench, or null for {@code --real-guest-only}
     * @return the text report
     */
    static String run(SeedsBench simulated, SeedsOptions o, RealGuestOptions rg, RealGuestBench realGuest,
            String command) {
        if (simulated != null) {
            SeedsBench.Report report = simulated.run(o);
            RealGuestReport guest = realGuest.run(rg, System.getenv());
            TextFiles.write(report.json(), RealGuestFormat.addToJson(report.jsonText(), guest));
            if (o.html() != null) {
                try {
                    String page = Files.readString(o.html(), StandardCharsets.UTF_8);
                    TextFiles.write(o.html(), RealGuestFormat.addToHtml(page, guest, report.seeds()));
                } catch (IOException e) {
                    throw new UncheckedIOException("cannot read " + o.html() + ": " + e.getMessage(), e);
                }
            }
            return withSection(report.format(), RealGuestFormat.text(guest, report.seeds()));
        }
        String started = ZonedDateTime.now().format(DateTimeFormatter.ISO_OFFSET_DATE_TIME);
        Provenance provenance = Provenance.now(command);
        HostLoad.Sample before = HostLoad.sample();
        RealGuestReport guest = realGuest.run(rg, System.getenv());
        HostLoad load = HostLoad.between(before, HostLoad.sample());
        Path json = o.json() != null ? o.json() : Path.of(System.getProperty("java.io.tmpdir"), "kickplug-seeds-"
                + ZonedDateTime.now().format(DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss", Locale.ROOT)) + ".json");
        TextFiles.write(json, RealGuestFormat.addToJson(SeedsJson.write(List.of(), o.runtimeNanos(), load, started, provenance),
                guest));
        if (o.html() != null) {
            TextFiles.write(o.html(), RealGuestFormat.addToHtml(SeedsHtml.write(List.of(), o.runtimeNanos(), load,
                    started), guest, List.of()));
        }
        return "kp:bench seeds --real-guest-only: seeds 002, 003 and 004 on the real guest only (the simulated seeds"
                + " not run)\n" + RealGuestFormat.text(guest, List.of()) + "JSON: " + json.toAbsolutePath() + "\n";
    }

    /** The simulated report with the real-guest section before its last line ("JSON: ..."), if it has one. */
    static String withSection(String report, String section) {
        int json = report.lastIndexOf("\nJSON: ");
        if (json < 0) {
            return report + section;
        }
        return report.substring(0, json + 1) + section + report.substring(json + 1);
    }
}
