package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.DeviceRecovery;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.RingSelector;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.manager.SharedMemory;
import io.kickplug.guest.engine.DeviceRemovalTest.CountingJob;
import io.kickplug.guest.testing.Closer;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.packed.ds.PackedVirtqueueFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code kp:ring}'s path ({@link DiskRegistry#setRing}) under I/O: the disk's ring format flips between split and
 * packed while a guest writes and reads back a pattern; each flip resets the device, the guest re-probes,
 * negotiates the other format (VIRTIO_F_RING_PACKED on or off) and resubmits. Every request completes once,
 * the data reads back, every recovery succeeds.
 */
class RingSwapTest {
    private static final long DISK = 8L << 20;
    private static final int SWAPS = Integer.getInteger("kickplug.ring.swaps", 8);

    @TempDir
    Path shm;

    private final VirtqueueFactory rings =
            RingSelector.of(new VirtqueueFactoryComponent(), new PackedVirtqueueFactoryComponent());
    private final ConcurrentLinkedQueue<DeviceRecovery> log = new ConcurrentLinkedQueue<>();
    @RegisterExtension
    final Closer opened = new Closer();

    @ParameterizedTest
    @EnumSource(value = TransportKind.class, names = {"MMIO", "PCI"})
    void ringFormatFlipsUnderIoAndEveryRequestCompletesOnce(TransportKind transport) throws Exception {
        DiskRegistry host = opened.add(new DiskRegistry(new TransportFactoryComponent(rings),
                new IoThreadFactoryComponent(), new GuestMemoryFactoryComponent(),
                () -> List.of(new MemoryBackendFactory())));
        host.setSharedMemory(new SharedMemory(shm));
        host.attach(DiskSpec.memory("r0", DISK).withQueues(2, 64).withTransport(transport));
        DeviceSource source = new DeviceSource() {
            @Override
            public GuestPort port() {
                try {
                    return host.port("r0");
                } catch (DiskException e) {
                    return null;
                }
            }

            @Override
            public VirtqueueFactory virtqueues() {
                return rings;
            }
        };
        MachineConfig config = MachineConfig.defaults("r0").withVcpus(2).withTimeout(Duration.ofSeconds(20));
        GuestMachine machine = opened.add(VcpuMachine.boot(host.port("r0"), rings, config,
                io.kickplug.guest.kick.KickPolicies.builtIn().get(config.kickPolicy()),
                new io.kickplug.guest.lock.LockRegistry(), source, log::add));
        assertEquals(0, machine.features() & VirtioFeatures.RING_PACKED);
        List<CountingJob> jobs = List.of(new CountingJob(0, DISK / 2, 4096, 8, 6),
                new CountingJob(DISK / 2, DISK / 2, 4096, 8, 6));
        ConcurrentLinkedQueue<Throwable> errors = new ConcurrentLinkedQueue<>();
        Thread runner = new Thread(() -> {
            try {
                machine.runJobs(new ArrayList<>(jobs), Duration.ofMinutes(2));
            } catch (Throwable e) {
                errors.add(e);
            }
        }, "runner-r0");
        runner.start();
        int swaps = 0;
        RingFormat ring = RingFormat.SPLIT;
        while (swaps < SWAPS && runner.isAlive()) {
            long before = jobs.stream().mapToLong(CountingJob::completions).sum();
            ring = ring == RingFormat.SPLIT ? RingFormat.PACKED : RingFormat.SPLIT;
            assertEquals(ring, host.setRing("r0", ring).ring());
            swaps++;
            // Each swap waits until the guest completed I/O on the returned device.
            CountingJob.awaitProgress(jobs, before, runner::isAlive);
        }
        runner.join(Duration.ofMinutes(2).toMillis());
        assertTrue(errors.isEmpty(), () -> "runs failed: " + errors);
        assertTrue(swaps >= Math.min(SWAPS, 3), "the jobs ended before enough swaps: " + swaps);
        jobs.forEach(CountingJob::assertIntact);
        assertEquals(ring == RingFormat.PACKED, (machine.features() & VirtioFeatures.RING_PACKED) != 0,
                "the guest negotiated the last format");
        assertFalse(log.isEmpty(), "the guest saw the device go and come back");
        for (DeviceRecovery r : log) {
            assertNull(r.error(), "recovery failed");
        }
        System.out.println("RingSwapTest " + transport + ": " + swaps + " ring swaps, " + log.size()
                + " recoveries, " + log.stream().mapToLong(DeviceRecovery::resubmitted).sum() + " resubmitted");
    }
}
