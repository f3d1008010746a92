package io.kickplug.blk.manager;

import static io.kickplug.guest.testing.ProcessMaps.mapped;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.MemoryLease;
import io.kickplug.api.memory.ReleasedMemoryException;
import io.kickplug.api.memory.Unmapper;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.blk.testkit.InProcessHost;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 18 for in-process disks: {@code kp:detach} unmaps the disk's guest memory (its shared-memory file) at
 * once, without waiting for the garbage collector, unless a simulated guest still holds a lease on it; and no
 * access can reach the memory once it is unmapped: it is refused with {@link ReleasedMemoryException}.
 */
class GuestMemoryReleaseTest {

    @TempDir
    Path dir;

    private DiskRegistry registry;
    private SharedMemory shared;

    @BeforeEach
    void setUp() {
        assertTrue(Unmapper.available(), "sun.misc.Unsafe.invokeCleaner is reachable on this JVM");
        registry = InProcessHost.registry();
        shared = new SharedMemory(dir);
        registry.setSharedMemory(shared);
    }

    @AfterEach
    void tearDown() {
        registry.close();
    }

    private void attachAndUse(String disk) throws Exception {
        registry.attach(DiskSpec.memory(disk, 1 << 20).withQueues(1, 64));
        RawRingGuest guest = new RawRingGuest(registry.port(disk)).init(-1L, 1, 64);
        byte[] data = new byte[4096];
        data[0] = 42;
        assertEquals(VirtioBlk.S_OK, guest.request(0, VirtioBlk.T_OUT, 8, data, 0, Duration.ofSeconds(10)).status());
        assertEquals(42, guest.request(0, VirtioBlk.T_IN, 8, null, 4096, Duration.ofSeconds(10)).data()[0]);
    }

    @Test
    void detachUnmapsTheGuestMemoryAtOnceAndRefusesLaterAccess() throws Exception {
        attachAndUse("g0");
        Path ram = shared.ramFile("g0");
        assertTrue(mapped(ram), "the guest memory file is mapped while the disk is attached");
        GuestMemory memory = registry.port("g0").memory();
        memory.writeU32(0, 7);

        registry.detach("g0"); // no System.gc() anywhere: the release is deterministic

        assertFalse(mapped(ram), "the guest memory is unmapped when detach returns");
        assertFalse(Files.exists(ram), "and its file deleted");
        // A reference kept past the detach cannot touch the unmapped pages: every accessor refuses.
        assertThrows(ReleasedMemoryException.class, () -> memory.readU32(0));
        assertThrows(ReleasedMemoryException.class, () -> memory.writeU16Release(0, (short) 1));
        assertThrows(ReleasedMemoryException.class, () -> memory.read(0, ByteBuffer.allocate(16)));
        assertThrows(ReleasedMemoryException.class, () -> memory.views(0, 4096));
        assertThrows(ReleasedMemoryException.class, memory::lease, "no new lease on released memory");
    }

    @Test
    void aGuestsLeaseKeepsTheMemoryMappedUntilItCloses() throws Exception {
        attachAndUse("g1");
        Path ram = shared.ramFile("g1");
        GuestMemory memory = registry.port("g1").memory();
        MemoryLease guest = memory.lease();

        registry.detach("g1");
        assertTrue(mapped(ram), "a simulated guest still running on the memory keeps it mapped");
        memory.writeU64(64, 0x1234_5678_9abcL);
        assertEquals(0x1234_5678_9abcL, memory.readU64(64), "and can still use it");

        guest.close();
        assertFalse(mapped(ram), "unmapped when the last lease closes");
        assertThrows(ReleasedMemoryException.class, () -> memory.readU64(64));
        guest.close(); // a second close changes nothing
        assertFalse(mapped(ram));
    }

    @Test
    void closingTheRegistryForAnUpdateUnmapsButKeepsTheFileForTheNextVersion() throws Exception {
        attachAndUse("g2");
        Path ram = shared.ramFile("g2");
        registry.close(); // as when the bundle is updated: disks quiesced, their files kept
        assertFalse(mapped(ram), "no guest held a lease: the old version's mapping is gone");
        assertTrue(Files.exists(ram), "the file stays for the bundle's next version");
        shared.delete("g2");
    }
}
