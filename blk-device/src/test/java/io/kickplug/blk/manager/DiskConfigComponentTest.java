package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.transport.GuestPort;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The component's life cycle against a recording disk manager, without OSGi. */
class DiskConfigComponentTest {

    private final List<String> calls = new ArrayList<>();

    private final DiskManager disks = new DiskManager() {
        @Override
        public DiskInfo attach(DiskSpec spec) {
            if (spec.numQueues() > DiskSpec.MAX_QUEUES) {
                throw new DiskException("number of queues " + spec.numQueues() + " is not in 1..64");
            }
            calls.add("attach " + spec.name() + " " + spec.numQueues());
            return null;
        }

        @Override
        public void detach(String name) {
            calls.add("detach " + name);
        }

        @Override
        public List<DiskInfo> list() {
            return List.of();
        }

        @Override
        public DiskInfo info(String name) {
            throw new UnsupportedOperationException();
        }

        @Override
        public GuestPort port(String name) {
            throw new UnsupportedOperationException();
        }
    };

    @Test
    void attachesOnActivationReattachesOnChangeDetachesOnDeletion() {
        DiskConfigComponent c = new DiskConfigComponent(disks, Map.of("name", "d", "size", "1M", "queues", 2));
        c.modified(Map.of("name", "d", "size", "1M", "queues", 4));
        c.deactivate();
        c.deactivate();
        assertEquals(List.of("attach d 2", "detach d", "attach d 4", "detach d"), calls);
    }

    @Test
    void badConfigurationAttachesNothingAndThrowsNothing() {
        DiskConfigComponent c = new DiskConfigComponent(disks, Map.of("name", "d", "size", "1M", "queues", "x"));
        DiskConfigComponent tooMany = new DiskConfigComponent(disks, Map.of("name", "e", "size", "1M", "queues", 65));
        c.deactivate();
        tooMany.deactivate();
        assertEquals(List.of(), calls, "nothing attached, so nothing to detach");
    }
}
