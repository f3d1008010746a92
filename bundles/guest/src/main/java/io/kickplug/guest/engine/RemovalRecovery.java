package io.kickplug.guest.engine;

import io.kickplug.api.guest.DeviceRecovery;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.guest.virtio.NotTheSameDevice;
import io.kickplug.guest.virtio.VirtioBlkDriver;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * What a {@link VcpuMachine} does when its device goes away (hot-swap): freeze (every vCPU parks at a
 * {@linkplain #safePoint safe point}, no lock held, as blk_mq_freeze_queue), take what the old used rings hold
 * (those requests complete once, as usual), wait for the disk to come back through the {@link DeviceSource},
 * re-probe it ({@link VirtioBlkDriver#reprobe}), submit again every request that was in the device and not
 * completed, and thaw: Linux virtio_blk's freeze/restore. A request is completed to its job only when it is
 * taken from a used ring, and resubmitted only while it is not, so none completes twice. A removal during the
 * recovery starts it over.
 */
final class RemovalRecovery {
    private final VcpuMachine machine;
    private final DeviceSource source;
    private final Consumer<DeviceRecovery> recoveries;
    /** Non-null while the device is gone and the vCPUs freeze. */
    private volatile Episode current;
    /** Set when a removal comes while a recovery runs: it starts over. */
    private volatile boolean removedAgain;
    /** The thread of the latest recovery (set under the machine's monitor); close() waits for it. */
    private Thread thread;
    /** The last recovery, until a request completes after it. */
    private final AtomicReference<Episode> awaitingFirst = new AtomicReference<>();

    /** One removal: the vCPUs park, the recovery thread brings the device back. */
    private static final class Episode {
        final long removedAt;
        final CountDownLatch parked;
        final CountDownLatch resumed = new CountDownLatch(1);
        volatile long probedAt;
        volatile int collected;
        volatile int resubmitted;
        volatile String error;

        Episode(long removedAt, int vcpus) {
            this.removedAt = removedAt;
            this.parked = new CountDownLatch(vcpus);
        }

        DeviceRecovery record(String disk, long firstCompletion) {
            return new DeviceRecovery(disk, removedAt, probedAt, firstCompletion, collected, resubmitted, error);
        }
    }

    RemovalRecovery(VcpuMachine machine, DeviceSource source, Consumer<DeviceRecovery> recoveries) {
        this.machine = machine;
        this.source = source;
        this.recoveries = recoveries == null ? r -> { } : recoveries;
    }

    /** Whether a removal can be survived (there is a source to find the disk again). */
    boolean possible() {
        return source != null;
    }

    boolean running() {
        return current != null;
    }

    /**
     * A removal: returns the thread of a new recovery, for the caller to start once it left the machine's
     * monitor (which it holds here, having checked the state), or {@code null} when a recovery runs already (it
     * starts over).
     */
    Thread begin() {
        if (current != null) {
            removedAgain = true; // the device the recovery is probing went too: it starts over
            return null;
        }
        Episode e = new Episode(System.nanoTime(), machine.vcpus.size());
        current = e;
        Thread t = new Thread(() -> recover(e), "reprobe-" + machine.config().name());
        t.setDaemon(true);
        thread = t; // under the monitor: close() sees it and waits for it
        return t;
    }

    /** The thread of the latest recovery, or {@code null}; read under the machine's monitor. */
    Thread thread() {
        return thread;
    }

    /**
     * Parks vCPU {@code v} while the device is away (no lock held here); returns true when it did. The recovery
     * runs while every vCPU is parked, so nobody else touches the rings or the transport meanwhile.
     */
    boolean safePoint(VcpuThread v) {
        Episode e = current;
        if (e == null) {
            return false;
        }
        e.parked.countDown();
        try {
            while (!e.resumed.await(VcpuThread.IDLE_PARK_NANOS, TimeUnit.NANOSECONDS)) {
                if (machine.stopped || machine.broken != null) {
                    break;
                }
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new GuestDriverException("vcpu " + v.id + " interrupted while the device was away");
        }
        v.resumed();
        return true;
    }

    /** Freeze, collect, wait for the device, re-probe, resubmit, thaw (see the class comment). */
    private void recover(Episode e) {
        String name = machine.config().name();
        try {
            awaitParked(e);
            GuestPort dead = machine.port;
            long deadline = System.nanoTime() + machine.config().timeout().toNanos();
            while (true) {
                removedAgain = false;
                // The disk's port changes only once the old device's reset finished (its transport closed), so
                // its used rings are final by then, also when DEVICE_NEEDS_RESET and not a removal started this.
                GuestPort next = awaitReturn(dead, deadline);
                e.collected += collectAfterRemoval();
                try {
                    machine.reprobe(next, source.virtqueues());
                } catch (RuntimeException | LinkageError ex) {
                    // LinkageError: the port or rings came from a bundle revision that was updated meanwhile.
                    if (ex instanceof NotTheSameDevice || System.nanoTime() - deadline >= 0 || machine.stopped) {
                        throw ex;
                    }
                    dead = next; // it went again while we probed it, or it is not ready: wait for the next one
                    continue;
                }
                try {
                    e.resubmitted += machine.driver.resubmit();
                } catch (LinkageError ex) {
                    // The rings' bundle revision went away between the probe and the resubmission (a ring bundle
                    // update while the device came back): the device goes again. The requests are still marked in
                    // the device, so the next probe resubmits them; what the dying device completed is collected.
                    if (System.nanoTime() - deadline >= 0 || machine.stopped) {
                        throw ex;
                    }
                    dead = next;
                    continue;
                }
                e.probedAt = System.nanoTime();
                if (!removedAgain) {
                    break;
                }
                dead = next;
            }
            Episode unreported = awaitingFirst.getAndSet(e);
            if (unreported != null) {
                recoveries.accept(unreported.record(name, 0)); // no completion between two removals
            }
        } catch (RuntimeException | Error ex) {
            if (machine.stopped) {
                // The machine was closed (its job ended) while the device was away: the end of the recovery,
                // not a failure of it; reported without an error, never re-probed.
                recoveries.accept(e.record(name, 0));
                return;
            }
            e.error = ex.getMessage();
            recoveries.accept(e.record(name, 0));
            machine.fail(ex instanceof GuestDriverException ? ex : new GuestDriverException("device of " + name
                    + " could not be brought back: " + ex.getMessage(), ex));
        } finally {
            current = null;
            e.resumed.countDown();
            for (int q = 0; q < machine.driver.queueCount(); q++) {
                machine.driver.queue(q).drained();
            }
            machine.vcpus.forEach(v -> LockSupport.unpark(v.thread));
        }
    }

    private void awaitParked(Episode e) {
        MachineConfig config = machine.config();
        long deadline = System.nanoTime() + config.timeout().toNanos();
        try {
            while (!e.parked.await(VcpuThread.IDLE_PARK_NANOS, TimeUnit.NANOSECONDS)) {
                if (machine.stopped || machine.broken != null) {
                    throw new GuestDriverException("machine " + config.name() + " stopped while its device was away");
                }
                if (System.nanoTime() - deadline >= 0) {
                    throw new GuestDriverException("the vCPUs of " + config.name() + " did not stop within "
                            + config.timeout().toMillis() + " ms after the device was removed");
                }
                machine.vcpus.forEach(v -> LockSupport.unpark(v.thread));
            }
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new GuestDriverException("interrupted while the device was away");
        }
    }

    /** Hands what the removed device completed to the submitting vCPUs, to run once they thaw. */
    private int collectAfterRemoval() {
        long now = System.nanoTime();
        int n = machine.driver.collectAfterRemoval(slot -> {
            IoRequest io = (IoRequest) slot.context();
            Completion c = new Completion(io, slot.result(), now, slot.hipri());
            slot.queue().release(slot);
            io.owner.remote.add(c);
        });
        noteFirstCompletion(n, now);
        return n;
    }

    /** Waits for the disk's port to be another than {@code dead}. */
    private GuestPort awaitReturn(GuestPort dead, long deadline) {
        MachineConfig config = machine.config();
        while (true) {
            if (machine.stopped) {
                throw new GuestDriverException("machine " + config.name() + " closed while its device was away");
            }
            GuestPort next = source.port();
            if (next != null && next != dead && source.virtqueues() != null) {
                return next;
            }
            if (System.nanoTime() - deadline >= 0) {
                throw new GuestDriverException("the device of " + config.name() + " was removed and did not come "
                        + "back within " + config.timeout().toMillis() + " ms");
            }
            // Nothing to wait on: the disk comes back through OSGi services and ConfigAdmin in other bundles.
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    /** Reports the last recovery once a request completes after it. */
    void noteFirstCompletion(int completed, long now) {
        if (completed == 0) {
            return;
        }
        Episode a = awaitingFirst.get();
        if (a != null && awaitingFirst.compareAndSet(a, null)) {
            recoveries.accept(a.record(machine.config().name(), now));
        }
    }

    /** At close, under the machine's monitor: lets parked vCPUs go. */
    void stop() {
        Episode pending = current;
        if (pending != null) {
            pending.resumed.countDown();
        }
    }

    /** At close, once the recovery thread ended: reports a recovery no completion followed. */
    void close() {
        Episode unreported = awaitingFirst.getAndSet(null);
        if (unreported != null) {
            recoveries.accept(unreported.record(machine.config().name(), 0));
        }
    }
}
