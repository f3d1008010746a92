package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.guest.DeviceRecoveries;
import io.kickplug.api.guest.DeviceRecovery;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleException;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;

/**
 * Gogo command {@code kp:swap}: updates a Kickplug bundle (from its location, or from a jar) while disks are
 * attached, waits until every configured disk is attached again, and reports per disk how long it was away
 * and, where a simulated guest was running I/O on it, the guest's pause (from the removal to the first
 * completed request after the return) and the requests it resubmitted.
 *
 * <p>Services are looked up through the system bundle's context at each use: the command may update its own
 * bundle, and the disk manager it waits for is a new one after the swap.
 */
@Component(service = SwapCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=swap",
})
public final class SwapCommand {

    private static final String API = "io.kickplug.api";
    private static final long STEP_MILLIS = 5;
    /** How long the report waits for the guests' first completions after the disks are back. */
    private static final long GUEST_WAIT_MILLIS = 1000;

    private final BundleContext system;

    @Activate
    public SwapCommand(BundleContext context) {
        this.system = context.getBundle(0).getBundleContext();
    }

    @Descriptor("update a Kickplug bundle while disks are attached and report, per disk, the pause and the requests"
            + " resubmitted")
    public String swap(
            @Descriptor("update from this jar instead of the bundle's location")
            @Parameter(names = "--to", absentValue = "") String to,
            @Descriptor("seconds to wait for the disks to come back (default 30)")
            @Parameter(names = "--timeout", absentValue = "30") String timeout,
            @Descriptor("BUNDLE: its id or symbolic name, e.g. io.kickplug.virtio.transport") String which)
            throws InterruptedException {
        long waitNanos = TimeUnit.SECONDS.toNanos(Args.positiveInt("--timeout", timeout));
        Bundle bundle = find(which);
        String bsn = bundle.getSymbolicName();
        if (API.equals(bsn)) {
            throw new IllegalArgumentException("refusing to swap " + API + ": every Kickplug bundle is wired to its "
                    + "packages, so a new version only takes effect by refreshing (restarting) all of them at once, "
                    + "which no disk survives as a swap; update the other bundles one by one");
        }
        if (bundle.getBundleId() == 0 || bsn == null || !bsn.startsWith("io.kickplug.")) {
            throw new IllegalArgumentException("bundle " + which + " (" + bsn + ") is not a Kickplug bundle");
        }
        Path jar = to.isBlank() ? null : Path.of(to);
        if (jar != null && !Files.isRegularFile(jar)) {
            throw new IllegalArgumentException("--to " + to + ": no such file");
        }
        List<String> disks = configured();
        long start = System.nanoTime();
        String problem = update(bundle, jar);
        if (problem != null) {
            throw new IllegalStateException(bsn + ": " + problem + (disks.isEmpty() ? ""
                    : "; disks " + String.join(", ", disks) + " stay quiesced until a version that starts is in "
                    + "place (kp:swap " + bundle.getBundleId() + " --to GOOD.jar)"));
        }
        long updated = System.nanoTime();
        Map<String, Long> back = awaitDisks(disks, start + waitNanos);
        Map<String, DeviceRecovery> guests = awaitGuests(back.keySet(), start);
        StringBuilder out = new StringBuilder();
        out.append("swapped ").append(bsn).append(" ").append(bundle.getVersion()).append(" (bundle ")
                .append(bundle.getBundleId()).append(") in ").append(ms(updated - start)).append(" ms");
        for (String disk : disks) {
            out.append(System.lineSeparator()).append(String.format(Locale.ROOT, "%-12s", disk));
            Long at = back.get(disk);
            if (at == null) {
                out.append("NOT BACK after ").append(ms(System.nanoTime() - start))
                        .append(" ms (see the log for why its configuration did not attach)");
                continue;
            }
            out.append("attached again after ").append(ms(at - start)).append(" ms");
            DeviceRecovery r = guests.get(disk);
            if (r == null) {
                out.append("; no guest I/O was running on it");
            } else if (r.error() != null) {
                out.append("; guest FAILED: ").append(r.error());
            } else {
                out.append("; guest: quiesce to first completion ")
                        .append(r.pauseNanos() < 0 ? "- (no I/O since)" : ms(r.pauseNanos()) + " ms")
                        .append(", ").append(r.resubmitted()).append(" requests resubmitted, ")
                        .append(r.collected()).append(" completed by the old device");
            }
        }
        if (back.size() < disks.size()) {
            throw new IllegalStateException(out.toString());
        }
        return out.toString();
    }

    private static String ms(long nanos) {
        return String.format(Locale.ROOT, "%.1f", nanos / 1e6);
    }

    private Bundle find(String which) {
        if (which.chars().allMatch(Character::isDigit) && !which.isEmpty()) {
            Bundle b = system.getBundle(Long.parseLong(which));
            if (b == null) {
                throw new IllegalArgumentException("no bundle with id " + which);
            }
            return b;
        }
        for (Bundle b : system.getBundles()) {
            if (which.equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw new IllegalArgumentException("no bundle named " + which);
    }

    /**
     * Updates (and starts) the bundle on a thread of its own, so that updating this very bundle works; returns
     * why the new version does not run, or {@code null}.
     */
    private static String update(Bundle bundle, Path jar) throws InterruptedException {
        AtomicReference<String> problem = new AtomicReference<>();
        Thread t = new Thread(() -> {
            try {
                if (jar == null) {
                    bundle.update();
                } else {
                    try (InputStream in = Files.newInputStream(jar)) {
                        bundle.update(in);
                    }
                }
                if (bundle.getState() != Bundle.ACTIVE) {
                    bundle.start(); // throws the resolver's reason when the new version does not resolve
                }
            } catch (BundleException | IOException | RuntimeException e) {
                problem.set("update failed: " + e.getMessage());
            }
        }, "kp-swap");
        t.start();
        t.join();
        return problem.get();
    }

    /** When each disk was attached again (nanoTime), for those that were within the deadline. */
    private Map<String, Long> awaitDisks(List<String> disks, long deadline) {
        Map<String, Long> back = new LinkedHashMap<>();
        while (back.size() < disks.size() && System.nanoTime() - deadline < 0) {
            DiskManager dm = service(DiskManager.class);
            if (dm != null) {
                try {
                    for (DiskInfo d : dm.list()) {
                        if (disks.contains(d.name()) && !back.containsKey(d.name())) {
                            back.put(d.name(), System.nanoTime());
                        }
                    }
                } catch (RuntimeException goingAway) {
                    // the manager is being replaced; look again
                }
            }
            pause();
        }
        return back;
    }

    /** The guests' recovery records since {@code since}, per disk, waiting a little for first completions. */
    private Map<String, DeviceRecovery> awaitGuests(Collection<String> disks, long since) {
        Map<String, DeviceRecovery> found = new LinkedHashMap<>();
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(GUEST_WAIT_MILLIS);
        boolean anyGuest = false;
        do {
            DeviceRecoveries log = service(DeviceRecoveries.class);
            if (log == null) {
                return found;
            }
            for (DeviceRecovery r : log.since(since)) {
                if (disks.contains(r.disk())) {
                    found.put(r.disk(), r);
                    anyGuest = true;
                }
            }
            if (found.size() == disks.size() || !anyGuest && System.nanoTime() - deadline >= 0) {
                break;
            }
            pause();
        } while (System.nanoTime() - deadline < 0);
        return found;
    }

    private List<String> configured() {
        DiskManager dm = service(DiskManager.class);
        return dm == null ? List.of() : new ArrayList<>(dm.configuredDisks());
    }

    private <T> T service(Class<T> type) {
        try {
            Collection<ServiceReference<T>> refs = system.getServiceReferences(type, null);
            for (ServiceReference<T> ref : refs) {
                T s = system.getService(ref);
                if (s != null) {
                    system.ungetService(ref);
                    return s;
                }
            }
        } catch (InvalidSyntaxException | IllegalStateException e) {
            return null;
        }
        return null;
    }

    private static void pause() {
        DiskManagerWait.pause(STEP_MILLIS, "the disks");
    }
}
