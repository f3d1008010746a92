package io.kickplug.blk.device;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.blk.testkit.ForwardingBackend;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.virtio.iothread.EventLoopThread;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The per-head pools (chain, cursors, buffer views, request, tracked entry) are never reused while a request
 * that owns them is in flight: with a blocking backend on a worker pool, requests complete out of order, and
 * each head is made available again, with a new sector and a new data buffer, as soon as the driver has
 * consumed its used entry. Every read must land in the buffer of its own publication with the data of its own
 * sector, every write must be answered with its own status and used length (VIRTIO 1.2 section 2.7.8: the
 * id and len of the used element; 5.2.6: the status byte). A stale view, cursor or request in a slot would put
 * data into an earlier publication's buffer, or answer with another request's length.
 */
class PooledRequestReuseTest extends DirectRingFixture {

    private static final int REQUESTS = Integer.getInteger("kickplug.reuse.requests", 20_000);
    private static final int QUEUE_SIZE = 256;
    private static final int DEPTH = 48;
    private static final int BLOCK = 4096;
    /** Blocks [0, READ_BLOCKS) hold a pattern and are only read; writes go to the blocks after them. */
    private static final int READ_BLOCKS = 1024;
    private static final int BUFFERS = 128;

    private static byte pattern(long block, int i) {
        return (byte) (block * 31 + i * 7 + (i >> 8));
    }

    /** A blocking backend over memory whose calls take a random few scheduling rounds: out-of-order ends. */
    private static final class ShuffledBackend extends ForwardingBackend {
        /** Names of the threads that read. */
        final Set<String> threads = ConcurrentHashMap.newKeySet();

        ShuffledBackend() {
            super(new MemoryBackend(2L * READ_BLOCKS * BLOCK, false), "shuffled", true);
        }

        private static void jitter() {
            for (int n = ThreadLocalRandom.current().nextInt(4); n > 0; n--) {
                Thread.yield();
            }
        }

        @Override
        public void read(long offset, ByteBuffer[] dst) throws IOException {
            threads.add(Thread.currentThread().getName());
            jitter();
            super.read(offset, dst);
        }

        @Override
        public void write(long offset, ByteBuffer[] src) throws IOException {
            jitter();
            super.write(offset, src);
        }
    }

    @ParameterizedTest(name = "workers {0}")
    @ValueSource(ints = {1, 4})
    void headsReusedAtOnceWithNewBuffersGetTheirOwnDataStatusAndLength(int workers) throws Exception {
        ShuffledBackend backend = new ShuffledBackend();
        byte[] block = new byte[BLOCK];
        for (int b = 0; b < READ_BLOCKS; b++) {
            for (int i = 0; i < BLOCK; i++) {
                block[i] = pattern(b, i);
            }
            backend.inner().write((long) b * BLOCK, new ByteBuffer[] {ByteBuffer.wrap(block)});
        }
        ioThread = new EventLoopThread("reuse-io");
        device = new VirtioBlkDevice(BlkDeviceSpec.of("reuse", backend, false, 1, QUEUE_SIZE,
                "reuse".getBytes(StandardCharsets.US_ASCII), List.of(ioThread))
                .withMapping(QueueMapping.of(List.of(), 1, 1)).withTrackedLock(TrackedLockKind.MUTEX).withWorkers(workers));
        DirectRingDriver driver = new DirectRingDriver(QUEUE_SIZE, (long) BUFFERS * BLOCK);
        driver.activate(device);

        SplittableRandom random = new SplittableRandom(12);
        ArrayDeque<Integer> free = new ArrayDeque<>();
        for (int h = 0; h < DEPTH; h++) {
            free.add(h);
        }
        ArrayDeque<Integer> freeBuffers = new ArrayDeque<>();
        for (int b = 0; b < BUFFERS; b++) {
            freeBuffers.add(b);
        }
        int[] bufferIndexOf = new int[QUEUE_SIZE];
        long[] sectorOf = new long[QUEUE_SIZE];
        long[] bufferOf = new long[QUEUE_SIZE];
        boolean[] read = new boolean[QUEUE_SIZE];
        int published = 0;
        int completed = 0;
        byte[] got = new byte[BLOCK];
        byte[] want = new byte[BLOCK];
        while (completed < REQUESTS) {
            boolean any = false;
            while (!free.isEmpty() && published < REQUESTS) {
                int head = free.poll();
                // A buffer of no request in flight, the least recently used: each publication of a head gets
                // another buffer than its previous one.
                int bufferIndex = freeBuffers.poll();
                long buffer = driver.data + (long) BLOCK * bufferIndex;
                bufferIndexOf[head] = bufferIndex;
                boolean isRead = random.nextInt(4) != 0;
                long blockNo = isRead ? random.nextInt(READ_BLOCKS) : READ_BLOCKS + random.nextInt(READ_BLOCKS);
                driver.memory.fill(buffer, BLOCK, (byte) 0x5a);
                driver.prepare(head, isRead ? VirtioBlk.T_IN : VirtioBlk.T_OUT, blockNo * (BLOCK / 512), buffer, BLOCK);
                sectorOf[head] = blockNo * (BLOCK / 512);
                bufferOf[head] = buffer;
                read[head] = isRead;
                driver.add(head);
                published++;
                any = true;
            }
            if (any) {
                driver.publish();
                device.queueNotify(0);
            }
            driver.awaitUsed(1);
            for (int n = driver.usedPending(); n > 0; n--) {
                int head = driver.takeUsed();
                assertTrue(head >= 0 && head < DEPTH, "used head " + head);
                assertEquals(VirtioBlk.S_OK, driver.status(head), "status of head " + head);
                if (read[head]) {
                    assertEquals(BLOCK + 1, driver.lastUsedLen, "used length of read head " + head);
                    long blockNo = sectorOf[head] / (BLOCK / 512);
                    driver.memory.read(bufferOf[head], got, 0, BLOCK);
                    for (int i = 0; i < BLOCK; i++) {
                        want[i] = pattern(blockNo, i);
                    }
                    assertArrayEquals(want, got, "data of read head " + head + " at block " + blockNo);
                } else {
                    assertEquals(1, driver.lastUsedLen, "used length of write head " + head);
                }
                free.add(head);
                freeBuffers.add(bufferIndexOf[head]);
                completed++;
            }
        }
        assertEquals(0, device.stats().requestsInFlight());
        assertEquals(null, driver.signals.fault.get());
        assertTrue(!backend.threads.isEmpty() && backend.threads.stream()
                .allMatch(t -> t.startsWith("kickplug-blk-reuse-worker")), "the blocking backend's calls run on the "
                + "disk's workers: " + backend.threads);
    }
}
