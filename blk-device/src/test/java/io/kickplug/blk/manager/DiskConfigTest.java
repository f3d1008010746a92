package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.AvailEventMode;
import io.kickplug.api.virtio.RingFormat;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** io.kickplug.disk configuration properties to DiskSpec, without OSGi. */
class DiskConfigTest {

    private static Map<String, Object> props(Object... kv) {
        Map<String, Object> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put((String) kv[i], kv[i + 1]);
        }
        return m;
    }

    private static String error(Map<String, Object> props) {
        return assertThrows(DiskException.class, () -> DiskConfig.toSpec(props)).getMessage();
    }

    @Test
    void everyPropertyAsConfigAdminTypesThem() {
        DiskSpec spec = DiskConfig.toSpec(props("name", "d1", "backend", "file", "file", "/tmp/x.img", "size", "",
                "readonly", true, "direct", Boolean.TRUE, "queues", 8, "queue.size", 128, "iothreads", 4,
                "mapping", "0,4;1,5;2,6;3,7", "transport", "mmio", "serial", "SER-1", "tracked.lock", "yielding",
                "workers", 16));
        assertEquals(new DiskSpec("d1", new BackendSpec("file", "/tmp/x.img", 0, true, true), TransportKind.MMIO, 8,
                128, 4, List.of(List.of(0, 4), List.of(1, 5), List.of(2, 6), List.of(3, 7)), "SER-1",
                TrackedLockKind.YIELDING, 16, DiskSpec.DEFAULT_GUEST_MEMORY), spec);
    }

    @Test
    void stringsFromAConfigFileAndDefaults() {
        DiskSpec spec = DiskConfig.toSpec(props("name", "d2", "size", "64M", "queues", "2", "readonly", "false",
                "workers", 4L));
        assertEquals(new BackendSpec("memory", null, 64L << 20, false, false), spec.backend());
        assertEquals(2, spec.numQueues());
        assertEquals(DiskSpec.DEFAULT_QUEUE_SIZE, spec.queueSize());
        assertEquals(1, spec.ioThreads());
        assertEquals(List.of(), spec.mapping());
        assertEquals(TrackedLockKind.MUTEX, spec.trackedLock());
        assertEquals(4, spec.workers());
        assertNull(spec.serial());
        assertEquals("file", DiskConfig.toSpec(props("name", "d3", "file", "/img")).backend().kind(),
                "a file implies the file backend");
    }

    @Test
    void exactErrors() {
        assertEquals("disk configuration has no 'name'", error(props("size", "1M")));
        assertEquals("disk configuration property 'queues' must be an integer, not 'four'",
                error(props("name", "d", "size", "1M", "queues", "four")));
        assertEquals("disk configuration property 'size' must be a size in bytes with an optional K, M, G or T "
                + "suffix, not '12Q'", error(props("name", "d", "size", "12Q")));
        assertEquals("disk configuration property 'readonly' must be true or false, not 'yes'",
                error(props("name", "d", "size", "1M", "readonly", "yes")));
        assertEquals("disk 'd': property 'tracked.lock': unknown tracked lock 'spin' (expected yielding, mutex or "
                + "sharded)", error(props("name", "d", "size", "1M", "tracked.lock", "spin")));
        assertEquals("disk 'd': property 'mapping': '0,1;x': 'x' is not a queue number (expected e.g. \"0,2;1,3\")",
                error(props("name", "d", "size", "1M", "mapping", "0,1;x")));
        assertEquals("disk 'd': property 'mapping': '0,1;;2': I/O thread 1 has no queues (expected e.g. \"0,2;1,3\")",
                error(props("name", "d", "size", "1M", "mapping", "0,1;;2")));
        assertEquals("disk 'd': the file backend needs property 'file'", error(props("name", "d", "backend", "file")));
        assertEquals("disk 'd': property 'file' is only for the file backend, not 'memory'",
                error(props("name", "d", "backend", "memory", "file", "/x")));
    }

    /** The virtqueue format (VIRTIO 1.2 sections 2.7 and 2.8): split unless the configuration says packed. */
    @Test
    void ringProperty() {
        assertEquals(RingFormat.SPLIT, DiskConfig.toSpec(props("name", "d", "size", "1M")).ring());
        assertEquals(RingFormat.PACKED, DiskConfig.toSpec(props("name", "d", "size", "1M", "ring", "packed")).ring());
        assertEquals(RingFormat.SPLIT, DiskConfig.toSpec(props("name", "d", "size", "1M", "ring", " Split ")).ring());
        assertEquals("disk 'd': property 'ring': unknown ring format 'loop' (expected split or packed)",
                error(props("name", "d", "size", "1M", "ring", "loop")));
    }

    /** When split rings publish avail_event (section 2.7.10): enable (Linux vhost) unless the configuration says pop. */
    @Test
    void availEventProperty() {
        assertEquals(AvailEventMode.ENABLE, DiskConfig.toSpec(props("name", "d", "size", "1M")).availEvent());
        DiskSpec pop = DiskConfig.toSpec(props("name", "d", "size", "1M", "avail.event", " POP "));
        assertEquals(AvailEventMode.POP, pop.availEvent());
        assertEquals("disk 'd': property 'avail.event': unknown avail_event mode 'kick' (expected enable or pop)",
                error(props("name", "d", "size", "1M", "avail.event", "kick")));
        // The configuration a kp:attach writes carries it back (DiskConfigStore), so it survives a bundle update.
        assertEquals(pop, DiskConfig.toSpec(DiskConfigStore.toProperties(pop)));
    }

    @Test
    void mappingSyntax() {
        assertEquals(List.of(List.of(0, 2), List.of(1, 3)), DiskSpec.parseMapping(" 0, 2 ; 1,3 "));
        assertEquals(List.of(), DiskSpec.parseMapping(""));
        assertEquals(List.of(List.of(5)), DiskSpec.parseMapping("5"));
    }

    @Test
    void nullBackendOptionsOfQemuNullCo() {
        DiskSpec spec = DiskConfig.toSpec(props("name", "n", "backend", "null", "size", "1G", "read.zeroes", "true",
                "latency.ns", 50_000L));
        assertEquals(new BackendSpec("null", null, 1L << 30, false, false, true, 50_000), spec.backend());
        assertEquals(new BackendSpec("null", null, 1L << 30, false, false, false, 0),
                DiskConfig.toSpec(props("name", "n", "backend", "null", "size", "1G")).backend(),
                "read-zeroes off and no latency by default, as in QEMU");
        assertEquals("disk configuration property 'latency.ns' must be nanoseconds in 0..1000000000, not '-1'",
                error(props("name", "n", "backend", "null", "size", "1G", "latency.ns", "-1")));
        assertEquals("disk 'm': properties 'read.zeroes' and 'latency.ns' are only for the null backend, not 'memory'",
                error(props("name", "m", "size", "1M", "read.zeroes", true)));
        // The configuration a kp:attach writes carries them back (DiskConfigStore).
        assertEquals(spec, DiskConfig.toSpec(DiskConfigStore.toProperties(spec)));
    }
}
