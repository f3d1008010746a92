package io.kickplug.guest.compare;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.command.OptionTable;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.guest.engine.GuestEngine;
import io.kickplug.guest.engine.GuestMachine;
import io.kickplug.guest.fio.Fio;
import io.kickplug.guest.fio.FioInvocation;
import io.kickplug.guest.fio.FioRunner;
import io.kickplug.guest.fio.TextFiles;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicyOption;

/**
 * Gogo command {@code kp:compare}: one fio job in the simulated guest against several notification strategies on one
 * disk ({@link CompareOptions}), rounds interleaved ({@link ComparePlan}), medians side by side
 * ({@link CompareFormat}). One guest boots for the whole comparison; each run switches the disk's queues first.
 */
@Component(service = CompareCommand.class, property = {
    "osgi.command.scope=kp",
    "osgi.command.function=compare",
})
public final class CompareCommand {

    public static final OptionTable OPTIONS = CompareOptions.TABLE;

    private final DiskManager disks;
    private final VirtqueueFactory virtqueues;
    private final VirtqueueFactory packed;
    private final GuestEngine engine;
    private final NotificationControl notifications;
    private final AtomicBoolean running = new AtomicBoolean();

    @Activate
    public CompareCommand(@Reference(name = "diskManager") DiskManager disks,
            @Reference(name = "virtqueueFactory", target = "(!(" + VirtqueueFactory.RING_PROPERTY + "=packed))")
            VirtqueueFactory virtqueues,
            @Reference(name = "packedVirtqueueFactory", target = "(" + VirtqueueFactory.RING_PROPERTY + "=packed)",
                    cardinality = ReferenceCardinality.OPTIONAL, policyOption = ReferencePolicyOption.GREEDY)
            VirtqueueFactory packed,
            @Reference(name = "guestEngine") GuestEngine engine,
            @Reference(name = "notificationControl") NotificationControl notifications) {
        this.disks = disks;
        this.virtqueues = virtqueues;
        this.packed = packed;
        this.engine = engine;
        this.notifications = notifications;
    }

    @Descriptor("compare notification strategies (and polling settings) on one disk with one fio job: kp:compare "
            + "DISK [--strategies immediate,bh,defer-call] [--poll off,on] [--job 'rw=randread bs=4k iodepth=32'] "
            + "[--rounds N] [--json FILE] [--html FILE]")
    public String compare(@Descriptor("DISK [options]") String... args) {
        CompareOptions o = CompareOptions.parse(Arrays.asList(args));
        FioInvocation invocation = Fio.parse(o.jobArgs());
        List<String> strategies = o.strategies().isEmpty() ? notifications.strategies() : o.strategies();
        List<Setting> settings = Setting.of(strategies, o.polls());
        if (!running.compareAndSet(false, true)) {
            throw new IllegalStateException("another kp:compare is running");
        }
        try {
            GuestPort port = disks.port(o.disk());
            CompareResult result;
            try (GuestMachine machine = engine.boot(port, RingSelector.of(virtqueues, packed),
                    engine.defaults(o.disk()))) {
                CompareRun.Polling polling = new CompareRun.Polling() {
                    @Override
                    public io.kickplug.api.poll.PollStatus status() {
                        return disks.pollStatus(o.disk());
                    }

                    @Override
                    public io.kickplug.api.poll.PollStatus set(boolean enabled, io.kickplug.api.poll.PollParams p) {
                        return disks.setPolling(o.disk(), enabled, p);
                    }
                };
                result = CompareRun.run(o.disk(), o.job(), settings, o.rounds(), notifications, polling,
                        () -> FioRunner.run(machine, o.disk(), invocation.jobs(), () -> cpu(o.disk())), line -> {
                        });
            }
            if (o.json() != null) {
                TextFiles.write(o.json(), CompareFormat.json(result));
            }
            if (o.html() != null) {
                TextFiles.write(o.html(), CompareFormat.html(result));
            }
            String text = CompareFormat.text(result);
            if (!result.errors().isEmpty()) {
                throw new IllegalStateException(text);
            }
            return text;
        } finally {
            running.set(false);
        }
    }

    private long cpu(String disk) {
        try {
            return disks.ioThreadCpuNanos(disk);
        } catch (RuntimeException e) {
            return -1;
        }
    }
}
