package io.kickplug.throttle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.blk.testkit.RecordedIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The wrapper: queues in order, releases on a limit change without a reset, counts, passes through at stop. */
class ThrottledBackendTest {

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final AtomicLong now = new AtomicLong();
    private final Throttles throttles = new Throttles(now::get, timer);

    @AfterEach
    void tearDown() {
        timer.shutdownNow();
    }

    /** Records what reaches it, in order; completes at once. */
    static final class Recording implements AsyncBlockBackend {
        final List<Long> offsets = new CopyOnWriteArrayList<>();

        @Override
        public void submit(BackendIo io) {
            offsets.add(io.offset());
            io.complete(null);
        }

        @Override
        public String kind() {
            return "rec";
        }

        @Override
        public long size() {
            return 1 << 20;
        }

        @Override
        public boolean readOnly() {
            return false;
        }

        @Override
        public void close() {
        }
    }

    static BackendIo read(long offset) {
        return new RecordedIo(BackendIo.Op.READ, offset, 512, new ByteBuffer[0], false, false);
    }

    private static void await(java.util.function.BooleanSupplier c, String what) {
        io.kickplug.virtio.testkit.Await.await(c, what);
    }

    @Test
    void requestsWaitInOrderAndALimitChangeAppliesWithoutAReset() throws Exception {
        Recording inner = new Recording();
        AsyncBlockBackend disk = throttles.wrap("d0", inner);
        throttles.configure("d0", List.of("--iops", "10")); // the fake clock stands still: 2 pass, the rest wait
        for (int i = 0; i < 6; i++) {
            disk.submit(read(i * 512L));
        }
        assertEquals(List.of(0L, 512L), inner.offsets);
        assertEquals(4L, throttles.stats("d0").get("throttle_waiting"));
        String text = throttles.configure("d0", List.of("--clear"));
        await(() -> inner.offsets.size() == 6, "released by the limit change");
        assertEquals(List.of(0L, 512L, 1024L, 1536L, 2048L, 2560L), inner.offsets, "in submission order");
        assertEquals(4L, throttles.stats("d0").get("throttle_delayed_requests"));
        assertTrue(text.contains("throttle group d0"), text);
    }

    /** An unlimited group lets requests through without its buckets; limits set again apply to the next ones. */
    @Test
    void unlimitedPassesAtOnceAndLimitsSetAgainApply() throws Exception {
        Recording inner = new Recording();
        AsyncBlockBackend disk = throttles.wrap("d0", inner);
        for (int i = 0; i < 50; i++) {
            disk.submit(read(i * 512L)); // the fake clock stands still: any limit would hold most of these
        }
        assertEquals(50, inner.offsets.size(), "no limit: every request passes at once");
        throttles.configure("d0", List.of("--iops", "10"));
        for (int i = 0; i < 5; i++) {
            disk.submit(read(i * 512L));
        }
        assertEquals(52, inner.offsets.size(), "limits set: the bucket of 1 (+1) lets two through");
        assertEquals(3L, throttles.stats("d0").get("throttle_waiting"));
        throttles.configure("d0", List.of("--clear"));
        await(() -> inner.offsets.size() == 55, "released by clearing the limits");
        disk.submit(read(4096));
        assertEquals(56, inner.offsets.size(), "unlimited again: passes at once");
    }

    @Test
    void aSharedGroupLimitsTheDisksTogetherAndStopPassesEverythingThrough() throws Exception {
        Recording a = new Recording();
        Recording b = new Recording();
        AsyncBlockBackend da = throttles.wrap("a", a);
        AsyncBlockBackend db = throttles.wrap("b", b);
        throttles.configure("a", List.of("--group", "g"));
        throttles.configure("b", List.of("--group=g", "--iops=10"));
        da.submit(read(0));
        db.submit(read(0));
        da.submit(read(512));
        db.submit(read(512));
        assertEquals(2, a.offsets.size() + b.offsets.size(), "two disks share one bucket of 1 request (+1)");
        throttles.passThroughAll();
        await(() -> a.offsets.size() + b.offsets.size() == 4, "all released at stop");
        db.submit(read(1024));
        assertEquals(3, b.offsets.size(), "passes at once after the stop");
    }
}
