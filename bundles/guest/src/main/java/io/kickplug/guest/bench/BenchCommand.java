package io.kickplug.guest.bench;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.command.OptionTable;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.api.lockstat.LockStats;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.GuestEngine;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Function;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Gogo command {@code kp:bench <benchmark> [options]}: the benchmarks that reproduce the source documents'
 * experiments in the simulated guest. The first argument names the benchmark; each has its own options. One
 * benchmark runs at a time.
 */
@Component(service = BenchCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=bench",
})
public final class BenchCommand {

    /** The benchmarks by name, for the usage line. */
    static final List<String> BENCHMARKS = List.of("kick", "seeds");

    private final DiskManager disks;
    private final VirtqueueFactory virtqueues;
    private final GuestEngine engine;
    private final LockStats lockStats;
    private final NotificationControl notifications;
    private final AtomicBoolean running = new AtomicBoolean();
    /**
     * {@code kp:vhost} and {@code kp:vhost-stop} of the vhost-user bundle as the Functions it registers for callers
     * outside Gogo (property {@code kickplug.vhost.call}), for {@code --real-guest}; optional.
     */
    @Reference(name = "vhostCommand", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            target = "(kickplug.vhost.call=vhost)")
    volatile Function vhostCommand;
    @Reference(name = "vhostStopCommand", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC,
            target = "(kickplug.vhost.call=vhost-stop)")
    volatile Function vhostStopCommand;
    /** The runtime's I/O threads (ioeventfd off in real threads); optional. */
    @Reference(name = "ioThreadFactory", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC)
    volatile IoThreadFactory ioThreads;

    @Activate
    public BenchCommand(@Reference(name = "diskManager") DiskManager disks,
            @Reference(name = "virtqueueFactory", target = "(!(" + VirtqueueFactory.RING_PROPERTY + "=packed))") VirtqueueFactory virtqueues,
            @Reference(name = "packedVirtqueueFactory", target = "(" + VirtqueueFactory.RING_PROPERTY + "=packed)",
                    cardinality = ReferenceCardinality.OPTIONAL, policyOption = ReferencePolicyOption.GREEDY)
            VirtqueueFactory packed,
            @Reference(name = "guestEngine") GuestEngine engine,
            @Reference(name = "lockStats") LockStats lockStats,
            @Reference(name = "notificationControl") NotificationControl notifications) {
        this.disks = disks;
        this.virtqueues = RingSelector.of(virtqueues, packed);
        this.engine = engine;
        this.lockStats = lockStats;
        this.notifications = notifications;
    }

    /** Split rings only (tests). */
    public BenchCommand(DiskManager disks, VirtqueueFactory virtqueues, GuestEngine engine, LockStats lockStats,
            NotificationControl notifications) {
        this(disks, virtqueues, null, engine, lockStats, notifications);
    }

    /** The options of each benchmark, which their parsers check: the command reference lists them. */
    public static final List<OptionTable> OPTIONS = List.of(KickBench.Options.TABLE, SeedsOptions.TABLE,
            RealGuestOptions.TABLE);

    @Descriptor("run a benchmark in the simulated guest on a temporary memory disk: kick (seed 000: under-lock vs"
            + " outside-lock kick at each exit latency) or seeds (the five seed experiments side by side, published"
            + " figure beside the measured one; --real-guest also runs 002, 003 and 004 on a Linux guest in QEMU over"
            + " Kickplug's vhost-user export). A default seeds run takes about " + SeedCosts.DEFAULT_RUN_MINUTES
            + " min on a 2-core machine shared with builds (its runs' runtimes times their costs measured there,"
            + " plus a set-up each); --quick, a first look, about " + SeedCosts.QUICK_RUN_SECONDS + " s")
    public String bench(@Descriptor("BENCHMARK [options]: kick or seeds, then its options") String... args) {
        if (args.length == 0) {
            throw new IllegalArgumentException("which benchmark? usage: kp:bench kick [options] | kp:bench seeds"
                    + " [options] (kick: " + KickBench.Options.TABLE.expected() + "; seeds: "
                    + SeedsOptions.TABLE.expected() + "; " + RealGuestOptions.TABLE.expected() + "; "
                    + SeedCosts.describe() + ")");
        }
        List<String> options = Arrays.asList(args).subList(1, args.length);
        return switch (args[0]) {
            case "kick" -> {
                KickBench.Options o = KickBench.Options.parse(options);
                yield exclusive(() -> KickBench.format(new KickBench(disks, virtqueues, engine, lockStats).run(o)));
            }
            case "seeds" -> {
                RealGuestOptions.Split split = RealGuestOptions.extract(options, System.getenv());
                SeedsOptions o = SeedsOptions.parse(split.rest());
                String command = command(args);
                if (split.realGuest() == null) {
                    yield exclusive(() -> new SeedsBench(disks, virtqueues, engine, lockStats, notifications)
                            .withIoThreads(ioThreads).withCommand(command).run(o).format());
                }
                yield exclusive(() -> RealGuestSeeds.run(split.realGuest().only() ? null
                        : new SeedsBench(disks, virtqueues, engine, lockStats, notifications).withIoThreads(ioThreads)
                                .withCommand(command),
                        o, split.realGuest(), new RealGuestBench(disks, notifications, lockStats, exporter()), command));
            }
            default -> throw new IllegalArgumentException("unknown benchmark '" + args[0] + "' (available: "
                    + String.join(", ", BENCHMARKS) + ")");
        };
    }

    /** The command as it was typed, near enough to type again: "kp:bench" and the arguments, quoted where needed. */
    static String command(String... args) {
        List<String> words = new java.util.ArrayList<>();
        words.add("kp:bench");
        words.addAll(Arrays.asList(args));
        return Provenance.shellQuote(words);
    }

    /** The vhost-user export through the vhost-user bundle's own commands, or null when it is not active. */
    private RealGuestBench.Exporter exporter() {
        Function export = vhostCommand;
        Function stop = vhostStopCommand;
        if (export == null || stop == null) {
            return null;
        }
        return new RealGuestBench.Exporter() {
            @Override
            public void export(String disk, java.nio.file.Path socket, int queues) {
                call(export, List.of(disk, "--socket", socket.toString(), "--queues", Integer.toString(queues)));
            }

            @Override
            public void stop(String disk) {
                call(stop, List.of(disk));
            }
        };
    }

    private static void call(Function f, List<Object> args) {
        try {
            f.execute(null, args);
        } catch (RuntimeException e) {
            throw e;
        } catch (Exception e) {
            throw new IllegalStateException(e.getMessage(), e);
        }
    }

    private String exclusive(java.util.function.Supplier<String> benchmark) {
        if (!running.compareAndSet(false, true)) {
            throw new IllegalStateException("another kp:bench is running");
        }
        try {
            return benchmark.get();
        } finally {
            running.set(false);
        }
    }
}
