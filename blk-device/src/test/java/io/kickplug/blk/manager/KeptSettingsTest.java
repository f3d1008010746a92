package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.notify.NotificationControl;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollStatus;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.blk.backend.MemoryBackendFactory;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import io.kickplug.virtio.testkit.Await;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

/**
 * Every setting a user changes on a running disk is written to its configuration when it is made and comes back
 * when the disk is rebuilt from it (a new disk manager over the same ConfigAdmin, as after the block-device
 * bundle's update or a restart with a state folder), without OSGi: the disk manager and configuration components
 * are driven as SCR drives them, ConfigAdmin is {@link MemoryConfigAdmin}.
 */
class KeptSettingsTest {

    private static final PollParams WINDOW = new PollParams(50_000, 4, 2);

    private final MemoryConfigAdmin admin = new MemoryConfigAdmin();
    private final List<DiskManagerComponent> managers = new ArrayList<>();

    @AfterEach
    void detachEverything() {
        DiskManagerComponent last = managers.get(managers.size() - 1);
        for (String disk : last.configuredDisks()) {
            last.detach(disk); // deletes the shared-memory files too
        }
        managers.forEach(DiskManagerComponent::close);
    }

    /** A disk manager as SCR activates it: factories, the memory backend, ConfigAdmin bound. */
    private DiskManagerComponent manager() throws Exception {
        DiskManagerComponent m = new DiskManagerComponent(
                new TransportFactoryComponent(new VirtqueueFactoryComponent()), new IoThreadFactoryComponent(),
                new GuestMemoryFactoryComponent(), runningFramework());
        m.addBackendFactory(new MemoryBackendFactory());
        Field field = DiskManagerComponent.class.getDeclaredField("configAdmin");
        field.setAccessible(true);
        field.set(m, admin);
        managers.add(m);
        return m;
    }

    /**
     * The block-device bundle is updated: the old manager writes what is left to write and quiesces its disks, a
     * new one comes.
     */
    private DiskManagerComponent swap(DiskManagerComponent old, DiskConfigComponent component) throws Exception {
        component.deactivated(5); // DEACTIVATION_REASON_BUNDLE_STOPPED: the disk is left to the manager's quiesce
        old.deactivate();
        return manager();
    }

    /** What a disk runs with: strategies per queue, polling, lock, ring, size, and that its device is the one. */
    private static String observed(DiskManagerComponent m, String disk) {
        PollStatus poll = m.pollStatus(disk);
        return m.counters(disk).stream().map(QueueCounters::configured).toList() + " poll " + poll.requested() + " "
                + poll.params() + " " + m.info(disk).trackedLock().label() + " " + m.info(disk).ring().id() + " "
                + m.info(disk).sizeBytes();
    }

    @Test
    void everySettingMadeLiveIsWrittenAndTheRebuiltDiskHasItAgain() throws Exception {
        DiskManagerComponent first = manager();
        first.attach(DiskSpec.memory("d0", 1 << 20).withQueues(2, 256));
        DiskConfigComponent component = new DiskConfigComponent(first, first, admin.of("d0"));
        VirtioBlkDevice device = first.device("d0");

        first.setStrategy("d0", "bh", NotificationControl.ALL_QUEUES);
        first.setStrategy("d0", "defer-call", 1);
        first.setPolling("d0", true, WINDOW);
        first.setTrackedLock("d0", TrackedLockKind.SHARDED);
        first.resize("d0", 2 << 20);
        first.setRing("d0", RingFormat.PACKED);
        String live = observed(first, "d0");
        assertEquals("[bh, defer-call] poll true PollParams[maxNs=50000, grow=4, shrink=2] sharded packed 2097152",
                live, "kp:ring re-attaches the disk with the settings made before it");

        first.flushSettings(); // written by a thread of their own
        Map<String, Object> kept = admin.of("d0");
        assertEquals("bh", kept.get("notify.strategy"));
        assertEquals("1=defer-call", kept.get("notify.queues"));
        assertEquals(true, kept.get("poll"));
        assertEquals(50_000L, kept.get("poll.max.ns"));
        assertEquals(4L, kept.get("poll.grow"));
        assertEquals(2L, kept.get("poll.shrink"));
        assertEquals("sharded", kept.get("tracked.lock"));
        assertEquals("2097152", kept.get("size"));
        assertEquals("packed", kept.get("ring"));
        assertEquals(2, kept.get("queues"), "what it was attached with stays");

        // SCR hands each recorded change to the component, late: none re-attaches or undoes anything.
        VirtioBlkDevice afterRing = first.device("d0");
        assertNotSame(device, afterRing, "kp:ring itself resets the device, as before");
        for (Map<String, Object> event : List.copyOf(admin.events)) {
            component.modified(event);
        }
        assertSame(afterRing, first.device("d0"), "recording a live change re-attaches nothing");
        assertEquals(live, observed(first, "d0"));

        DiskManagerComponent second = swap(first, component);
        DiskConfigComponent rebuilt = new DiskConfigComponent(second, second, admin.of("d0"));
        assertEquals(live, observed(second, "d0"), "the rebuilt disk has every setting");
        rebuilt.deactivated(5);
    }

    @Test
    void aConfigurationEventOlderThanALiveChangeDoesNotUndoIt() throws Exception {
        DiskManagerComponent m = manager();
        m.attach(DiskSpec.memory("d0", 1 << 20));
        DiskConfigComponent component = new DiskConfigComponent(m, m, admin.of("d0"));
        m.setTrackedLock("d0", TrackedLockKind.SHARDED);
        m.flushSettings();
        Map<String, Object> stale = admin.of("d0");
        assertEquals("sharded", stale.get("tracked.lock"));
        m.setTrackedLock("d0", TrackedLockKind.YIELDING);
        m.setStrategy("d0", "bh", 0);
        component.modified(stale); // delivered after the two later changes, written or on their way
        m.flushSettings();
        component.modified(stale); // delivered after they are written
        assertEquals(TrackedLockKind.YIELDING, m.info("d0").trackedLock());
        assertEquals("bh", m.counters("d0").get(0).configured());
        assertEquals("yielding", admin.of("d0").get("tracked.lock"));
    }

    @Test
    void aSettingChangedInTheConfigurationIsAppliedLiveAndOtherChangesReattach() throws Exception {
        DiskManagerComponent m = manager();
        m.attach(DiskSpec.memory("d0", 1 << 20));
        DiskConfigComponent component = new DiskConfigComponent(m, m, admin.of("d0"));
        VirtioBlkDevice device = m.device("d0");

        Map<String, Object> edited = new HashMap<>(admin.of("d0"));
        edited.put("tracked.lock", "sharded");
        edited.put("notify.strategy", "bh");
        edited.put("poll", "true");
        edited.put("size", "4M");
        admin.getFactoryConfiguration(DiskConfig.FACTORY_PID, "d0", "?").update(new java.util.Hashtable<>(edited));
        component.modified(admin.of("d0"));
        assertSame(device, m.device("d0"), "a tracked lock, strategy, polling or size change needs no re-attach");
        assertEquals("[bh] poll true PollParams[maxNs=32768, grow=0, shrink=0] sharded split 4194304",
                observed(m, "d0"));

        edited = new HashMap<>(admin.of("d0"));
        edited.put("queues", 2);
        admin.getFactoryConfiguration(DiskConfig.FACTORY_PID, "d0", "?").update(new java.util.Hashtable<>(edited));
        component.modified(admin.of("d0"));
        assertNotSame(device, m.device("d0"), "a queue count has no live path");
        assertEquals("[bh, bh] poll true PollParams[maxNs=32768, grow=0, shrink=0] sharded split 4194304",
                observed(m, "d0"));
    }

    @Test
    void attachingTheKeptDiskAgainIsAnsweredWithItAndAnotherIsRefused() throws Exception {
        DiskSpec spec = DiskSpec.memory("d0", 1 << 20).withQueues(2, 256);
        DiskManagerComponent first = manager();
        first.attach(spec);
        DiskConfigComponent component = new DiskConfigComponent(first, first, admin.of("d0"));
        first.setStrategy("d0", "bh", NotificationControl.ALL_QUEUES);
        first.resize("d0", 2 << 20);
        VirtioBlkDevice device = first.device("d0");

        assertEquals(2 << 20, first.attach(spec).sizeBytes(), "the same disk: kept as it is");
        assertSame(device, first.device("d0"));
        DiskException e = assertThrows(DiskException.class, () -> first.attach(spec.withQueues(4, 256)));
        assertEquals("a disk named 'd0' is already attached with other settings (queues 2 kept, 4 asked): "
                + "kp:detach it first", e.getMessage());

        // A restart: the start-up script's kp:attach comes before the configuration is handed over.
        DiskManagerComponent second = swap(first, component);
        String expected = "[bh, bh] poll false PollParams[maxNs=32768, grow=0, shrink=0] mutex split 2097152";
        second.attach(spec);
        assertEquals(expected, observed(second, "d0"), "attached as its configuration keeps it");
        VirtioBlkDevice attached = second.device("d0");
        DiskConfigComponent adopting = new DiskConfigComponent(second, second, admin.of("d0"));
        assertSame(attached, second.device("d0"), "its configuration component adopts it");
        assertEquals(expected, observed(second, "d0"));
        adopting.deactivated(5);
    }

    @Test
    void exportsStartWithTheStrategiesOfTheirQueuesIncludingQueuesOnlyTheyHave() throws Exception {
        DiskManagerComponent first = manager();
        first.attach(DiskSpec.memory("d0", 1 << 20));
        DiskConfigComponent component = new DiskConfigComponent(first, first, admin.of("d0"));
        VirtioBlkDevice export = first.exportDevice("d0", 4);
        first.setStrategy("d0", "bh", NotificationControl.ALL_QUEUES);
        first.setStrategy("d0", "defer-call", 3); // a queue only the export has
        assertEquals(List.of("bh", "bh", "bh", "defer-call"), configured(export));
        first.flushSettings();
        assertEquals("3=defer-call", admin.of("d0").get("notify.queues"));
        first.releaseExport("d0", export);
        assertEquals(List.of("bh", "bh", "bh", "defer-call"), configured(first.exportDevice("d0", 4)),
                "the vhost-user bundle came back: a new export");

        DiskManagerComponent second = swap(first, component);
        DiskConfigComponent rebuilt = new DiskConfigComponent(second, second, admin.of("d0"));
        assertEquals(List.of("bh", "bh", "bh", "defer-call"), configured(second.exportDevice("d0", 4)),
                "the disk and its export were rebuilt from the configuration");
        rebuilt.deactivated(5);
    }

    @Test
    void anotherBundlesSettingsAndTheDisksOwnWrittenTogetherUndoNeitherAndReattachNothing() throws Exception {
        DiskManagerComponent m = manager();
        m.attach(DiskSpec.memory("d0", 1 << 20));
        DiskConfigComponent component = new DiskConfigComponent(m, m, admin.of("d0"));
        VirtioBlkDevice device = m.device("d0");
        // The recorder thread writes the strategies while the throttle bundle's kp:throttle writes its limits.
        for (int i = 0; i < 200; i++) {
            m.setStrategy("d0", i % 2 == 0 ? "bh" : "defer-call", NotificationControl.ALL_QUEUES);
            assertTrue(m.keepSettings("d0", "throttle.", Map.of("iops-total", Integer.toString(i))));
        }
        m.flushSettings();
        Map<String, Object> kept = admin.of("d0");
        assertEquals("defer-call", kept.get("notify.strategy"));
        assertEquals("199", kept.get("throttle.iops-total"));
        assertTrue(m.keepSettings("d0", "throttle.", Map.of()));
        assertEquals(null, admin.of("d0").get("throttle.iops-total"), "no settings: none kept");
        for (Map<String, Object> event : List.copyOf(admin.events)) {
            component.modified(event);
        }
        assertSame(device, m.device("d0"));
        assertEquals(false, m.keepSettings("nope", "throttle.", Map.of("iops-total", "1")), "no such disk");
        for (String prefix : List.of("notify.", "poll.", "ring.", "throttle", "")) {
            assertThrows(IllegalArgumentException.class, () -> m.keepSettings("d0", prefix, Map.of()), prefix);
        }
    }

    @Test
    void aWriteOfAnotherBundleWaitsForTheRecorderWhoseReadWasEarlier() throws Exception {
        DiskManagerComponent m = manager();
        m.attach(DiskSpec.memory("d0", 1 << 20));
        CountDownLatch held = new CountDownLatch(1);
        CountDownLatch release = new CountDownLatch(1);
        admin.beforeUpdate = () -> {
            if (Thread.currentThread().getName().equals("kickplug-disk-settings") && held.getCount() > 0) {
                held.countDown(); // the recorder has read the configuration, without throttle.*
                await(release);
            }
        };
        m.setStrategy("d0", "bh", NotificationControl.ALL_QUEUES);
        await(held);
        // kp:throttle, on another thread: it must not write between the recorder's read and its write.
        CompletableFuture<Boolean> throttle = new CompletableFuture<>();
        Thread writer = new Thread(() -> throttle.complete(m.keepSettings("d0", "throttle.",
                Map.of("iops-total", "5000"))), "kp-throttle");
        writer.start();
        Await.await(() -> throttle.isDone() || writer.getState() == Thread.State.BLOCKED, Duration.ofSeconds(10),
                "kp:throttle's write finished or waits");
        release.countDown();
        assertTrue(throttle.get(10, TimeUnit.SECONDS));
        m.flushSettings();
        assertEquals("bh", admin.of("d0").get("notify.strategy"));
        assertEquals("5000", admin.of("d0").get("throttle.iops-total"), "the recorder's write did not undo it");
    }

    private static void await(CountDownLatch latch) {
        try {
            assertTrue(latch.await(10, TimeUnit.SECONDS));
        } catch (InterruptedException e) {
            throw new AssertionError(e);
        }
    }

    private static List<String> configured(VirtioBlkDevice device) {
        return device.queueCounters().stream().map(QueueCounters::configured).toList();
    }

    /** A bundle context whose framework is active (the manager's bundle is updated, the framework runs on). */
    private static BundleContext runningFramework() {
        Bundle system = (Bundle) Proxy.newProxyInstance(Bundle.class.getClassLoader(), new Class<?>[] {Bundle.class},
                (p, m, a) -> {
                    if (m.getName().equals("getState")) {
                        return Bundle.ACTIVE;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
        return (BundleContext) Proxy.newProxyInstance(BundleContext.class.getClassLoader(),
                new Class<?>[] {BundleContext.class}, (p, m, a) -> {
                    if (m.getName().equals("getBundle")) {
                        return system;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
    }
}
