package io.kickplug.blk.device;

import static io.kickplug.api.virtio.BufferSpec.readable;
import static io.kickplug.api.virtio.BufferSpec.writable;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.BackendIo.Op;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.blk.backend.MemoryBackend;
import io.kickplug.blk.fake.DiscardSegments;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.blk.fake.PatternIo;
import io.kickplug.virtio.iothread.EventLoopThread;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The device over a backend of the asynchronous contract ({@link AsyncBlockBackend}) that completes on a thread of
 * its own, in its own order: completions come back to the queue, one per request, with their status; operations
 * wait for the unplug; writethrough uses FUA when the backend offers it and a flush when it does not.
 */
class AsyncBackendDeviceTest {

    private static final Duration TIMEOUT = Duration.ofSeconds(10);
    private static final long DISK = 1 << 20;

    @RegisterExtension
    final DeviceRig rig = new DeviceRig();
    private Remote backend;

    /**
     * A "remote" backend: submissions are held until unplug, then a thread of its own runs each unplugged batch in
     * reverse order on a memory backend and completes them. Records every operation.
     */
    static final class Remote implements AsyncBlockBackend {
        final MemoryBackend memory = new MemoryBackend(DISK, false);
        final boolean fua;
        final List<String> ops = Collections.synchronizedList(new ArrayList<>());
        final List<BackendIo> held = new ArrayList<>();
        /** Names of the threads that called submit: the queue's I/O thread only, never a worker pool's. */
        final java.util.Set<String> submitters = Collections.synchronizedSet(new java.util.TreeSet<>());
        final LinkedBlockingQueue<List<BackendIo>> batches = new LinkedBlockingQueue<>();
        volatile long failOffset = -1;
        final Thread thread;
        volatile boolean closed;

        Remote(boolean fua) {
            this.fua = fua;
            thread = new Thread(this::serve, "remote-backend");
            thread.setDaemon(true);
            thread.start();
        }

        private void serve() {
            try {
                while (!closed) {
                    List<BackendIo> batch = batches.take();
                    Collections.reverse(batch);
                    for (BackendIo io : batch) {
                        ops.add(io.op() + (io.fua() ? "+fua" : "") + "@" + io.offset());
                        IOException error = null;
                        try {
                            if (io.offset() == failOffset) {
                                throw new IOException("remote says no");
                            }
                            switch (io.op()) {
                                case READ -> memory.read(io.offset(), io.buffers());
                                case WRITE -> memory.write(io.offset(), io.buffers());
                                case FLUSH -> memory.flush();
                                case DISCARD -> memory.discard(io.offset(), io.length());
                                case WRITE_ZEROES -> memory.writeZeroes(io.offset(), io.length(), io.mayUnmap());
                                default -> throw new IOException("op " + io.op());
                            }
                        } catch (IOException e) {
                            error = e;
                        }
                        io.complete(error);
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        @Override
        public synchronized void submit(BackendIo io) {
            submitters.add(Thread.currentThread().getName());
            held.add(io);
        }

        @Override
        public synchronized void unplug() {
            if (!held.isEmpty()) {
                batches.add(new ArrayList<>(held));
                held.clear();
            }
        }

        synchronized int held() {
            return held.size();
        }

        @Override
        public boolean supportsFua() {
            return fua;
        }

        @Override
        public boolean supportsDiscard() {
            return true;
        }

        @Override
        public boolean supportsWriteZeroes() {
            return true;
        }

        @Override
        public String kind() {
            return "remote";
        }

        @Override
        public long size() {
            return DISK;
        }

        @Override
        public boolean readOnly() {
            return false;
        }

        @Override
        public void close() {
            closed = true;
            thread.interrupt();
        }
    }

    private RawRingGuest start(boolean fua, int queues) {
        backend = new Remote(fua);
        rig.backend = backend;
        rig.threads.add(new EventLoopThread("io0"));
        rig.device(BlkDeviceSpec.of("remote", backend, false, queues, 256, "remote".getBytes(StandardCharsets.US_ASCII),
                rig.threads));
        return rig.guest(8 << 20, -1L, queues, 64);
    }

    @Test
    void anAsynchronousBackendIsUsedAsItIsAndItsCompletionsReachTheRing() throws Exception {
        RawRingGuest guest = start(false, 4);
        int blocks = (int) (DISK / 4096);
        PatternIo.write(guest, 4, blocks, 4096, 16, 5);
        assertEquals(java.util.Set.of("io0"), backend.submitters, "submitted on the I/O thread, no worker pool");
        assertEquals(List.of(), PatternIo.verify(guest, 4, blocks, 4096, 16, 5));
        assertEquals(2L * blocks, rig.device.stats().requestsCompleted());
        assertEquals(0, rig.device.stats().requestsInFlight());
        assertEquals(0, backend.held(), "every drain unplugged what it submitted");
    }

    @Test
    void aFailedOperationIsAnIoErrorForItsRequestOnly() throws Exception {
        RawRingGuest guest = start(false, 1);
        backend.failOffset = 4096;
        RawRingGuest.Completed bad = guest.request(0, VirtioBlk.T_OUT, 8, new byte[4096], 0, TIMEOUT);
        RawRingGuest.Completed good = guest.request(0, VirtioBlk.T_OUT, 16, new byte[4096], 0, TIMEOUT);
        assertEquals(VirtioBlk.S_IOERR, bad.status());
        assertEquals(VirtioBlk.S_OK, good.status());
    }

    // VIRTIO 1.2 section 5.2.6.2: in writethrough mode a completed write is stable.
    @Test
    void writethroughUsesFuaWhenTheBackendOffersIt() throws Exception {
        RawRingGuest guest = start(true, 1);
        guest.writeConfig(VirtioBlk.CFG_WRITEBACK, 1, 0);
        assertEquals(VirtioBlk.S_OK, guest.request(0, VirtioBlk.T_OUT, 8, new byte[512], 0, TIMEOUT).status());
        assertEquals(List.of("WRITE+fua@4096"), backend.ops);
    }

    @Test
    void writethroughWithoutFuaIsAWriteThenAFlush() throws Exception {
        RawRingGuest guest = start(false, 1);
        guest.writeConfig(VirtioBlk.CFG_WRITEBACK, 1, 0);
        assertEquals(VirtioBlk.S_OK, guest.request(0, VirtioBlk.T_OUT, 8, new byte[512], 0, TIMEOUT).status());
        assertEquals(List.of("WRITE@4096", "FLUSH@0"), backend.ops);
    }

    @Test
    void writeZeroesOfSeveralSegmentsIsOneOperationPerSegmentAndOneCompletion() throws Exception {
        RawRingGuest guest = start(false, 1);
        byte[] segments = DiscardSegments.of(3).add(8, 8, 0).add(64, 0, 0).add(128, 8, 1).bytes();
        long status = guest.alloc(1, 1);
        guest.memory().fill(status, 1, (byte) 0xFF);
        guest.submit(0, List.of(readable(guest.header(VirtioBlk.T_WRITE_ZEROES, 0), 16),
                readable(guest.put(segments), segments.length), writable(status, 1)), false, "wz");
        UsedBuffer used = guest.awaitUsed(0, TIMEOUT);
        assertEquals("wz", used.token());
        assertEquals(VirtioBlk.S_OK, guest.get(status, 1)[0]);
        assertEquals(List.of("WRITE_ZEROES@4096", "WRITE_ZEROES@65536"), backend.ops,
                "the empty segment is skipped, the others go one after the other");
        assertNull(guest.queue(0).getUsed(), "one completion for the request");
    }
}
