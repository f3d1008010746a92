package io.kickplug.guest.bench;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The host's side of the real guest's step mode (the harness's {@code /init} with {@code /rg/steps}): for each
 * step the guest prints {@code RG-STEP-READY NAME} and waits; the host runs {@link Hooks#before} (switches the
 * strategy or lock kind, samples the device's counters) and sends a line; the guest runs {@code /rg/NAME.fio}
 * and prints {@code RG-STEP-IRQS NAME N} (virtio request interrupts it took), {@code RG-STEP-OUT NAME ...}
 * (fio's terse output) and {@code RG-STEP-EXIT NAME=STATUS}; then {@link Hooks#after} samples again.
 */
final class RealGuestSteps {

    /** What the host does around each step. */
    interface Hooks {
        void before(String step);

        void after(String step);
    }

    /** One step's result: fio's terse line and the guest's interrupt count. */
    record Output(String step, FioTerse fio, long guestIrqs) {
    }

    private RealGuestSteps() {
    }

    /**
     * Runs {@code steps} (names, in the order of {@code /rg/steps}).
     *
     * @param bootNanos how long to wait for the first step's READY (the boot)
     * @param stepNanos how long to wait for each later line of a step
     * @throws IllegalStateException naming the step, the cause and the console's last lines: a timeout, the guest
     *     ending early, an {@code RG-ERROR}, a kernel panic, fio failing or printing no terse line
     */
    static List<Output> run(GuestConsole console, List<String> steps, Hooks hooks, long bootNanos, long stepNanos)
            throws InterruptedException, IOException {
        List<Output> out = new ArrayList<>();
        boolean first = true;
        for (String step : steps) {
            String ready = await(console, "RG-STEP-READY ", step, first ? bootNanos : stepNanos);
            if (!ready.equals("RG-STEP-READY " + step)) {
                throw failure(console, step, "the guest is ready for another step: '" + ready + "'");
            }
            first = false;
            hooks.before(step);
            console.writeLine("go");
            long irqs = -1;
            String terse = null;
            List<String> other = new ArrayList<>();
            while (true) {
                String line = await(console, "RG-STEP-", step, stepNanos);
                if (line.startsWith("RG-STEP-IRQS " + step + " ")) {
                    irqs = parseLong(console, step, line.substring(("RG-STEP-IRQS " + step + " ").length()));
                } else if (line.startsWith("RG-STEP-OUT " + step + " ")) {
                    String text = line.substring(("RG-STEP-OUT " + step + " ").length());
                    if (text.startsWith("3;") && terse == null) {
                        terse = text;
                    } else {
                        other.add(text);
                    }
                } else if (line.startsWith("RG-STEP-EXIT " + step + "=")) {
                    hooks.after(step);
                    String status = line.substring(("RG-STEP-EXIT " + step + "=").length()).trim();
                    if (!status.equals("0") || terse == null) {
                        throw failure(console, step, "fio exited with " + status + (terse == null ? ", no terse result"
                                : "") + (other.isEmpty() ? "" : ": " + String.join(" | ", other)));
                    }
                    FioTerse fio;
                    try {
                        fio = FioTerse.parse(terse);
                    } catch (IllegalArgumentException e) {
                        throw failure(console, step, e.getMessage());
                    }
                    if (fio.error() != 0) {
                        throw failure(console, step, "fio reported error " + fio.error());
                    }
                    out.add(new Output(step, fio, irqs));
                    break;
                } else {
                    throw failure(console, step, "unexpected line '" + line + "'");
                }
            }
        }
        return out;
    }

    /**
     * The next line starting with {@code prefix}; other lines are skipped (kernel messages, the echo of what was
     * sent), except those that mean the guest will not get there.
     */
    private static String await(GuestConsole console, String prefix, String step, long timeoutNanos)
            throws InterruptedException {
        long deadline = System.nanoTime() + timeoutNanos;
        while (true) {
            long left = deadline - System.nanoTime();
            String line = left <= 0 ? null : console.readLine(left);
            if (line == null) {
                throw failure(console, step, "no " + prefix.trim() + " line within " + timeoutNanos / 1_000_000_000L
                        + " s");
            }
            if (line == GuestConsole.END) {
                throw failure(console, step, "the guest's console ended (QEMU exited)");
            }
            if (line.startsWith(prefix)) {
                return line;
            }
            if (line.startsWith("RG-ERROR") || line.startsWith("RG-DONE") || line.startsWith("RG-FIO-BEGIN")
                    || line.contains("Kernel panic") || line.startsWith("RG-CONSOLE")
                    || line.startsWith("qemu-system") && !line.contains("warning")) { // QEMU's errors on its stderr
                String why = line.startsWith("RG-FIO-BEGIN") || line.startsWith("RG-ERROR no job file")
                        ? " (the initramfs has no step mode: rebuild it with realguest.sh prepare)" : "";
                throw failure(console, step, "'" + line + "'" + why);
            }
        }
    }

    private static long parseLong(GuestConsole console, String step, String s) {
        try {
            return Long.parseLong(s.trim());
        } catch (NumberFormatException e) {
            throw failure(console, step, "interrupt count '" + s + "' is not a number");
        }
    }

    private static IllegalStateException failure(GuestConsole console, String step, String why) {
        return new IllegalStateException("real guest, step " + step + ": " + why + "; last console lines: "
                + String.join(" / ", console.tail()));
    }
}
