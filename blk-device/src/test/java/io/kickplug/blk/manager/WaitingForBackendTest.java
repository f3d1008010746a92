package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.blk.manager.BackendBindingsTest.HeldFactory;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.virtio.testkit.Await;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * A disk configuration whose backend kind has no factory yet (the runtime starts with an nbd disk configured and
 * the NBD bundle becomes active after the disk manager): it attaches when the factory arrives, not never.
 */
class WaitingForBackendTest {

    private static final int REASON_CONFIGURATION_DELETED = 4;
    private final DiskManagerComponent manager = new DiskManagerComponent(
            new TransportFactoryComponent(new VirtqueueFactoryComponent()), new IoThreadFactoryComponent(),
            new GuestMemoryFactoryComponent(), null);
    private final String name = "wait" + ProcessHandle.current().pid();

    @AfterEach
    void tearDown() {
        for (DiskInfo d : manager.list()) {
            manager.detach(d.name()); // deletes its shared-memory files too
        }
        manager.close();
    }

    private Map<String, Object> nbdDisk(String disk) {
        return Map.of("name", disk, "backend", "nbd", "uri", "nbd+unix:///d?socket=/nonexistent.sock");
    }

    private static HeldFactory nbdFactory() {
        HeldFactory f = new HeldFactory();
        f.kind = "nbd";
        return f;
    }

    @Test
    void aConfigurationWaitingForItsBackendAttachesWhenTheFactoryArrives() {
        new DiskConfigComponent(manager, nbdDisk(name));
        assertTrue(manager.list().isEmpty(), "no nbd factory yet: not attached");
        HeldFactory nbd = nbdFactory();
        manager.addBackendFactory(nbd);
        Await.await(() -> manager.list().size() == 1, "the disk attached once the factory arrived");
        assertEquals(name, manager.list().get(0).name());
        assertEquals("nbd+unix:///d?socket=/nonexistent.sock", nbd.specs.get(0).path());
    }

    @Test
    void aDeletedWaitingConfigurationIsNotAttachedLater() throws Exception {
        DiskConfigComponent c = new DiskConfigComponent(manager, nbdDisk(name));
        String other = name + "b";
        new DiskConfigComponent(manager, nbdDisk(other)); // waits too, and is kept
        c.deactivated(REASON_CONFIGURATION_DELETED);
        HeldFactory nbd = nbdFactory();
        manager.addBackendFactory(nbd);
        Await.await(() -> manager.list().size() == 1, "the kept configuration attached");
        // The retries run on one thread, one after the other: once it ended, the deleted one had its chance.
        Await.await(() -> Thread.getAllStackTraces().keySet().stream()
                .noneMatch(t -> t.getName().equals("kickplug-attach-waiting-nbd")), "the retries to end");
        assertEquals(1, manager.list().size());
        assertEquals(other, manager.list().get(0).name(), "the deleted one stays away");
        assertEquals(1, nbd.specs.size(), "one open: the kept disk's");
    }
}
