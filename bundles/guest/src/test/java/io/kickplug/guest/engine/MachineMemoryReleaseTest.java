package io.kickplug.guest.engine;

import static io.kickplug.guest.testing.ProcessMaps.mapped;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.guest.DeviceRecovery;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.MemoryLease;
import io.kickplug.api.memory.ReleasedMemoryException;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.manager.SharedMemory;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18, the simulated guest's side: a running machine holds a lease on its guest memory, so detaching the
 * disk under it does not unmap pages its vCPUs may still touch; closing the machine ends the lease, and the
 * mapping of the detached disk is gone at once (no garbage collection involved).
 */
class MachineMemoryReleaseTest {

    @TempDir
    Path shm;

    private final VirtqueueFactory rings = new VirtqueueFactoryComponent();
    private final DiskRegistry host = new DiskRegistry(new TransportFactoryComponent(rings),
            new IoThreadFactoryComponent(), new GuestMemoryFactoryComponent(), () -> List.of(new MemoryBackendFactory()));

    @AfterEach
    void tearDown() {
        host.close();
    }

    @Test
    void closingTheMachineUnmapsTheMemoryOfItsDetachedDisk() throws Exception {
        SharedMemory shared = new SharedMemory(shm);
        host.setSharedMemory(shared);
        host.attach(DiskSpec.memory("r0", 4L << 20).withQueues(1, 64));
        Path ram = shared.ramFile("r0");
        MachineConfig config = MachineConfig.defaults("r0").withVcpus(1).withTimeout(Duration.ofSeconds(20));
        GuestMemory memory = host.port("r0").memory();
        GuestMachine machine = VcpuMachine.boot(host.port("r0"), rings, config,
                io.kickplug.guest.kick.KickPolicies.builtIn().get(config.kickPolicy()),
                new io.kickplug.guest.lock.LockRegistry(), null, null);
        try {
            host.detach("r0");
            assertTrue(mapped(ram), "the running machine's lease keeps its memory mapped after the detach");
        } finally {
            machine.close();
        }
        assertFalse(mapped(ram), "closing the machine unmapped the detached disk's guest memory");
        assertThrows(ReleasedMemoryException.class, () -> memory.readU64(0), "a late access is refused");
        host.attach(DiskSpec.memory("r1", 4L << 20).withQueues(1, 64));
        PortWithMemory port = new PortWithMemory(memory, host.port("r1"));
        GuestDriverException e = assertThrows(GuestDriverException.class, () -> VcpuMachine.boot(port,
                rings, config, io.kickplug.guest.kick.KickPolicies.builtIn().get(config.kickPolicy()),
                new io.kickplug.guest.lock.LockRegistry(), null, null), "no machine boots on released memory");
        assertTrue(e.getMessage().contains("released"), e.getMessage());
    }

    /**
     * After a removal the returned device's guest memory is another mapping of the same pages, which its registry
     * unmaps as soon as the disk goes again: the re-probe reads it only under a lease of its own. Unleased, a read
     * racing that unmap crashed the test JVM (SIGSEGV in DirectByteBuffer.getLong under VirtioBlkDriver.reprobe,
     * RingSwapTest, in run 7 of the flake hunt of 2026-12-02).
     */
    @Test
    void theReprobeReadsTheReturnedDevicesMemoryOnlyUnderALease() throws Exception {
        SharedMemory shared = new SharedMemory(shm);
        host.setSharedMemory(shared);
        DiskSpec spec = DiskSpec.memory("r0", 4L << 20).withQueues(1, 64);
        host.attach(spec);
        GuestPort boot = host.port("r0");
        AtomicReference<DiskRegistry> current = new AtomicReference<>(host);
        LeaseCheckingMemory checked = new LeaseCheckingMemory();
        Map<GuestPort, GuestPort> wrapped = Collections.synchronizedMap(new IdentityHashMap<>());
        DeviceSource source = new DeviceSource() {
            @Override
            public GuestPort port() {
                try {
                    GuestPort p = current.get().port("r0");
                    // The recovery tells devices apart by identity: one wrapper per returned port.
                    return p == boot ? p
                            : wrapped.computeIfAbsent(p, l -> new PortWithMemory(checked.wrap(l.memory()), l));
                } catch (DiskException e) {
                    return null;
                }
            }

            @Override
            public VirtqueueFactory virtqueues() {
                return rings;
            }
        };
        List<DeviceRecovery> recoveries = new CopyOnWriteArrayList<>();
        MachineConfig config = MachineConfig.defaults("r0").withVcpus(1).withTimeout(Duration.ofSeconds(20));
        GuestMachine machine = VcpuMachine.boot(boot, rings, config,
                io.kickplug.guest.kick.KickPolicies.builtIn().get(config.kickPolicy()),
                new io.kickplug.guest.lock.LockRegistry(), source, recoveries::add);
        DiskRegistry next = new DiskRegistry(new TransportFactoryComponent(rings), new IoThreadFactoryComponent(),
                new GuestMemoryFactoryComponent(), () -> List.of(new MemoryBackendFactory()));
        try {
            host.close(); // the device goes: the recovery starts and waits for the disk
            next.setSharedMemory(shared);
            current.set(next);
            next.attach(spec); // back over the same shared memory, another mapping
            DeviceRemovalTest.CountingJob job = new DeviceRemovalTest.CountingJob(0, 1 << 20, 4096, 4, 1);
            machine.runJobs(List.of(job), Duration.ofSeconds(30));
            job.assertIntact();
        } finally {
            machine.close();
            next.close();
        }
        assertEquals(1, recoveries.size(), "one removal, one recovery: " + recoveries);
        assertNull(recoveries.get(0).error(), "the recovery succeeded");
        assertEquals(0, checked.unleased.get(), "reads of the returned device's memory without a lease");
        assertTrue(checked.leased.get() > 0, "the re-probe read the returned device's memory");
    }

    /** Wraps guest memory so that it counts reads made while one of its own leases is open, and the others. */
    private static final class LeaseCheckingMemory {
        final AtomicInteger leased = new AtomicInteger();
        final AtomicInteger unleased = new AtomicInteger();

        GuestMemory wrap(GuestMemory real) {
            AtomicInteger open = new AtomicInteger();
            return (GuestMemory) Proxy.newProxyInstance(GuestMemory.class.getClassLoader(),
                    new Class<?>[] {GuestMemory.class}, (proxy, method, args) -> {
                        if (method.getName().equals("lease")) {
                            MemoryLease lease = real.lease();
                            open.incrementAndGet();
                            AtomicBoolean closed = new AtomicBoolean();
                            return (MemoryLease) () -> {
                                if (closed.compareAndSet(false, true)) {
                                    open.decrementAndGet();
                                    lease.close();
                                }
                            };
                        }
                        if (method.getName().startsWith("read")) {
                            (open.get() > 0 ? leased : unleased).incrementAndGet();
                        }
                        try {
                            return method.invoke(real, args);
                        } catch (InvocationTargetException e) {
                            throw e.getCause();
                        }
                    });
        }
    }

    /** A live disk's registers with the given memory. */
    private record PortWithMemory(GuestMemory memory, GuestPort live) implements GuestPort {
        @Override
        public io.kickplug.api.transport.TransportKind kind() {
            return live.kind();
        }

        @Override
        public io.kickplug.api.transport.RegisterWindow mmio() {
            return live.mmio();
        }

        @Override
        public io.kickplug.api.transport.PciFunction pci() {
            return live.pci();
        }

        @Override
        public void connectInterrupts(io.kickplug.api.transport.GuestInterrupts interrupts) {
            live.connectInterrupts(interrupts);
        }
    }
}
