package io.kickplug.guest.compare;

import io.kickplug.api.poll.PollParams;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * One configuration a comparison runs: a notification strategy, and optionally the device-side polling of the disk
 * (off, or on with a poll-max-ns window sized by the bound poll policy).
 *
 * @param label how the table names it: the strategy alone, or "STRATEGY/off", "STRATEGY/poll",
 *     "STRATEGY/poll:NS"
 * @param strategy the strategy every queue uses
 * @param poll the polling to set, or {@code null} to leave the disk's as it is
 */
public record Setting(String label, String strategy, Poll poll) {

    /**
     * Polling for a run.
     *
     * @param enabled whether the disk polls
     * @param maxNs its window's poll-max-ns, or -1 for the disk's own
     */
    public record Poll(boolean enabled, long maxNs) {

        /** "off", "on" or a poll-max-ns in ns (polling on with that window). */
        public static Poll parse(String text) {
            String t = text.trim().toLowerCase(Locale.ROOT);
            switch (t) {
                case "off":
                    return new Poll(false, -1);
                case "on":
                    return new Poll(true, -1);
                default:
                    long ns;
                    try {
                        ns = Long.parseLong(t.endsWith("ns") ? t.substring(0, t.length() - 2) : t);
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--poll: '" + text + "' is not off, on or a poll-max-ns");
                    }
                    if (ns <= 0 || ns > PollParams.LIMIT_MAX_NS) {
                        throw new IllegalArgumentException("--poll: poll-max-ns " + ns + " is out of range 1.."
                                + PollParams.LIMIT_MAX_NS);
                    }
                    return new Poll(true, ns);
            }
        }

        String suffix() {
            return !enabled ? "off" : maxNs < 0 ? "poll" : "poll:" + maxNs;
        }
    }

    /**
     * Every strategy with every poll setting, strategy by strategy; without poll settings, the strategies alone
     * (labelled by their names).
     */
    public static List<Setting> of(List<String> strategies, List<Poll> polls) {
        List<Setting> out = new ArrayList<>();
        for (String s : strategies) {
            if (polls.isEmpty()) {
                out.add(new Setting(s, s, null));
            }
            for (Poll p : polls) {
                out.add(new Setting(s + "/" + p.suffix(), s, p));
            }
        }
        return out;
    }
}
