package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.ReleasedMemoryException;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.manager.SharedMemory;
import io.kickplug.guest.driver.GuestDriverException;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
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

    private static boolean mapped(Path file) throws IOException {
        String name = file.toAbsolutePath().toString();
        return Files.readAllLines(Path.of("/proc/self/maps")).stream().anyMatch(l -> l.contains(name));
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
        ReleasedPort port = new ReleasedPort(memory, host.port("r1"));
        GuestDriverException e = assertThrows(GuestDriverException.class, () -> VcpuMachine.boot(port,
                rings, config, io.kickplug.guest.kick.KickPolicies.builtIn().get(config.kickPolicy()),
                new io.kickplug.guest.lock.LockRegistry(), null, null), "no machine boots on released memory");
        assertTrue(e.getMessage().contains("released"), e.getMessage());
    }

    /** A live disk's registers with released memory. */
    private record ReleasedPort(GuestMemory memory, io.kickplug.api.transport.GuestPort live)
            implements io.kickplug.api.transport.GuestPort {
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
