package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.blk.testkit.StubDiskManager;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The component's life cycle against a recording disk manager, without OSGi. */
class DiskConfigComponentTest {

    private final List<String> calls = new ArrayList<>();

    private final DiskManager disks = new StubDiskManager() {
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

    private final NotificationControl notification = new NotificationControl() {
        @Override
        public List<QueueCounters> setStrategy(String disk, String strategy, int queue) {
            calls.add("notify " + disk + " " + strategy + " " + queue);
            return List.of();
        }

        @Override
        public List<String> strategies() {
            return List.of("immediate");
        }

        @Override
        public List<QueueCounters> counters(String disk) {
            return List.of();
        }
    };

    @Test
    void notifyStrategyIsAppliedAtAttachAndSwappedLiveWhenItAloneChanges() {
        Map<String, Object> props = new HashMap<>(Map.of("name", "d", "size", "1M", "notify.strategy", "bh"));
        DiskConfigComponent c = new DiskConfigComponent(disks, notification, props);
        props.put("notify.strategy", "defer-call");
        c.modified(props);
        props.remove("notify.strategy");
        c.modified(props);
        props.put("queues", 2);
        c.modified(props);
        c.deactivate();
        assertEquals(List.of("attach d 1", "notify d bh -1", "notify d defer-call -1", "notify d immediate -1",
                "detach d", "attach d 2", "notify d immediate -1", "detach d"), calls);
    }

    @Test
    void malformedNotifyStrategyAttachesNothing() {
        DiskConfigComponent c = new DiskConfigComponent(disks, notification,
                Map.of("name", "d", "size", "1M", "notify.strategy", "Not Valid"));
        c.deactivate();
        assertEquals(List.of(), calls);
        assertEquals("bh", DiskConfig.notifyStrategy(Map.of("notify.strategy", " bh ")));
        assertEquals("immediate", DiskConfig.notifyStrategy(Map.of()));
        assertThrows(DiskException.class, () -> DiskConfig.notifyStrategy(Map.of("notify.strategy", "a b")));
    }
}
