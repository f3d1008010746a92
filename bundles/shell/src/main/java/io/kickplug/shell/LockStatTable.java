package io.kickplug.shell;

import io.kickplug.api.guest.GuestSettings;
import io.kickplug.api.lockstat.LockStatRow;
import java.util.List;
import java.util.Locale;

/** Text of {@code kp:lockstat} (the shape of /proc/lock_stat) and {@code kp:guest}. */
public final class LockStatTable {

    private LockStatTable() {
    }

    /** One line per lock class; times in microseconds with two decimals, as /proc/lock_stat prints them. */
    public static String format(List<LockStatRow> rows) {
        if (rows.isEmpty()) {
            return "no lock statistics yet: no instrumented lock has been used";
        }
        int nameWidth = "class name".length();
        for (LockStatRow r : rows) {
            nameWidth = Math.max(nameWidth, r.name().length() + 1);
        }
        StringBuilder sb = new StringBuilder("lock_stat (times in microseconds)\n");
        StringBuilder header = new StringBuilder(pad("class name", nameWidth));
        for (String c : LockStatRow.COLUMNS) {
            header.append(String.format(Locale.ROOT, " %14s", c));
        }
        sb.append(header).append('\n').append("-".repeat(header.length())).append('\n');
        for (LockStatRow r : rows) {
            sb.append(pad(r.name() + ":", nameWidth));
            sb.append(count(r.conBounces())).append(count(r.contentions()));
            sb.append(micros(r.waittimeMinNs())).append(micros(r.waittimeMaxNs())).append(micros(r.waittimeTotalNs()));
            sb.append(count(r.acqBounces())).append(count(r.acquisitions()));
            sb.append(micros(r.holdtimeMinNs())).append(micros(r.holdtimeMaxNs())).append(micros(r.holdtimeTotalNs()));
            sb.append('\n');
        }
        return sb.toString();
    }

    /** {@code kp:guest}'s settings text. */
    public static String settings(GuestSettings s, List<String> policies) {
        return String.format(Locale.ROOT, "vcpus              %d%n"
                + "exit latency       %d ns (each notify, busy-waited on the notifying vCPU)%n"
                + "injection latency  %d ns (each interrupt, busy-waited on the receiving vCPU)%n"
                + "kick policy        %s (available: %s)%n"
                + "poll queues        %d (%s)", s.vcpus(), s.exitLatencyNs(), s.injectLatencyNs(),
                s.kickPolicy(), policies.isEmpty() ? "none" : String.join(", ", policies), s.pollQueues(),
                s.pollQueues() == 0 ? "hipri I/O turns its queue's interrupts off while in flight"
                        : "the last queues, without interrupts, take hipri I/O");
    }

    private static String pad(String text, int width) {
        return " ".repeat(Math.max(0, width - text.length())) + text;
    }

    private static String count(long value) {
        return String.format(Locale.ROOT, " %14d", value);
    }

    /** Nanoseconds as microseconds with two decimals ("3271.81"). */
    static String micros(long nanos) {
        return String.format(Locale.ROOT, " %14s", nanos / 1000 + "." + String.format(Locale.ROOT, "%02d",
                nanos % 1000 / 10));
    }
}
