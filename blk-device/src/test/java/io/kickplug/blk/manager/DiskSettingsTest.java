package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.virtio.RingFormat;
import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/** The settings a disk's configuration keeps: parsing, writing, and which properties re-attach a disk. */
class DiskSettingsTest {

    private static final DiskSettings CHANGED = new DiskSettings(
            QueueStrategies.parse("bh", "1=defer-call, 3=immediate"), true, new PollParams(50_000, 4, 2),
            TrackedLockKind.SHARDED, RingFormat.PACKED, 2L << 20);

    @Test
    void anEmptyConfigurationHasTheSettingsOfANewDisk() {
        DiskSettings d = DiskSettings.of(Map.of("name", "d0"));
        assertEquals(QueueStrategies.IMMEDIATE, d.strategies());
        assertFalse(d.poll());
        assertEquals(PollParams.defaults(), d.pollParams());
        assertEquals(TrackedLockKind.MUTEX, d.trackedLock());
        assertEquals(RingFormat.SPLIT, d.ring());
        assertEquals(0, d.sizeBytes(), "no size: the backend's own");
    }

    @Test
    void settingsRoundTripThroughTheirProperties() {
        Map<String, Object> props = CHANGED.toProperties();
        assertEquals("bh", props.get("notify.strategy"));
        assertEquals("1=defer-call,3=immediate", props.get("notify.queues"));
        assertEquals(Map.of("poll", true, "poll.max.ns", 50_000L, "poll.grow", 4L, "poll.shrink", 2L),
                Map.of("poll", props.get("poll"), "poll.max.ns", props.get("poll.max.ns"), "poll.grow",
                        props.get("poll.grow"), "poll.shrink", props.get("poll.shrink")));
        assertEquals("sharded", props.get("tracked.lock"));
        assertEquals("packed", props.get("ring"));
        assertEquals("2097152", props.get("size"));
        assertEquals(CHANGED, DiskSettings.of(props));
        // As ConfigAdmin may hand them back: text, and numbers as strings.
        Map<String, Object> text = new HashMap<>();
        props.forEach((k, v) -> text.put(k, String.valueOf(v)));
        assertEquals(CHANGED, DiskSettings.of(text));
    }

    @Test
    void aQueueExceptionEqualToTheDefaultIsNoException() {
        QueueStrategies s = QueueStrategies.IMMEDIATE.with("bh", 2).with("immediate", 2);
        assertEquals(QueueStrategies.IMMEDIATE, s);
        QueueStrategies all = QueueStrategies.parse("bh", "0=defer-call").with("defer-call", -1);
        assertEquals(new QueueStrategies("defer-call", new TreeMap<>()), all, "kp:notify on all queues drops them");
        assertEquals("defer-call", QueueStrategies.parse("bh", "5=defer-call").of(5));
        assertEquals("bh", QueueStrategies.parse("bh", "5=defer-call").of(4));
    }

    @Test
    void malformedSettingsNameTheProperty() {
        DiskException e = assertThrows(DiskException.class,
                () -> DiskSettings.of(Map.of("name", "d0", "notify.queues", "1:bh")));
        assertEquals("disk configuration property 'notify.queues': '1:bh' is not QUEUE=STRATEGY", e.getMessage());
        e = assertThrows(DiskException.class, () -> DiskSettings.of(Map.of("notify.queues", "64=bh")));
        assertEquals("disk configuration property 'notify.queues': queue 64 is not in 0..63", e.getMessage());
        e = assertThrows(DiskException.class, () -> DiskSettings.of(Map.of("notify.queues", "1=bh,1=bh")));
        assertTrue(e.getMessage().endsWith("queue 1 is named twice"), e.getMessage());
        e = assertThrows(DiskException.class, () -> DiskSettings.of(Map.of("poll.grow", "1")));
        assertEquals("disk configuration property 'poll.grow' must not be 1", e.getMessage());
        e = assertThrows(DiskException.class, () -> DiskSettings.of(Map.of("name", "d0", "tracked.lock", "spin")));
        assertTrue(e.getMessage().startsWith("disk 'd0': property 'tracked.lock': "), e.getMessage());
    }

    @Test
    void recordingWritesOnlyWhatDiffersFromTheConfiguration() {
        Map<String, Object> config = Map.of("name", "d0", "backend", "memory", "size", "1048576", "queues", 2);
        DiskSettings fresh = new DiskSettings(QueueStrategies.IMMEDIATE, false, PollParams.defaults(),
                TrackedLockKind.MUTEX, RingFormat.SPLIT, 1L << 20);
        assertEquals(config, fresh.recordedIn(config), "a disk as attached: the configuration stays as it is");

        Map<String, Object> next = CHANGED.recordedIn(config);
        assertEquals(2, next.get("queues"), "what the disk was attached with stays");
        assertEquals(CHANGED, DiskSettings.of(next));
        assertEquals(next, CHANGED.recordedIn(next), "written once");
    }

    @Test
    void aFileDiskWithoutASizeKeepsTakingItsImagesAndNoExceptionsLeaveNoProperty() {
        Map<String, Object> config = Map.of("name", "f", "backend", "file", "file", "/var/tmp/f.img",
                "notify.queues", "1=bh");
        Map<String, Object> next = new DiskSettings(QueueStrategies.IMMEDIATE.with("bh", -1), false,
                PollParams.defaults(), TrackedLockKind.MUTEX, RingFormat.SPLIT, 8L << 20).recordedIn(config);
        assertFalse(next.containsKey("size"), "resized on disk: the image carries its new size");
        assertFalse(next.containsKey("notify.queues"), next.toString());
        assertEquals("bh", next.get("notify.strategy"));

        Map<String, Object> sized = new HashMap<>(config);
        sized.put("size", "4M");
        assertEquals("2097152", CHANGED.recordedIn(sized).get("size"), "a size given is kept up to date");
    }

    @Test
    void onlyPropertiesWithoutALivePathReattach() {
        Map<String, Object> props = new HashMap<>(CHANGED.toProperties());
        props.put("name", "d0");
        props.put("queues", 4);
        props.put("throttle.iops-total", "5000");
        props.put("poll_max_ns", 10); // the metatype's spelling
        props.put("service.pid", "io.kickplug.disk~d0");
        assertEquals(Map.of("name", "d0", "queues", 4), DiskSettings.base(props));
    }

    @Test
    void aSizeOfZeroIsSatisfiedByAnySize() {
        DiskSettings noSize = new DiskSettings(CHANGED.strategies(), CHANGED.poll(), CHANGED.pollParams(),
                CHANGED.trackedLock(), CHANGED.ring(), 0);
        assertTrue(noSize.satisfiedBy(CHANGED));
        assertFalse(CHANGED.satisfiedBy(noSize));
        Map<String, Object> config = Map.of("name", "f");
        assertSame(null, noSize.recordedIn(config).get("size"));
    }
}
