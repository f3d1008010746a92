package io.kickplug.itest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.vhost.frontend.FrontendClient;
import io.kickplug.vhost.frontend.FrontendClient.Queue;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.io.File;
import java.lang.invoke.VarHandle;
import java.io.RandomAccessFile;
import java.lang.ProcessBuilder.Redirect;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A Linux-style poll queue against the real daemon, from outside its process: {@code kickplug.jar --daemon} with
 * file disks exported over vhost-user, and a front-end in this JVM that reaches them only through the Unix
 * sockets and the shared guest memory, as QEMU does for virtio_blk's poll queues. The front-end passes no call
 * descriptor (SET_VRING_CALL with the NOFD flag), negotiates VIRTIO_RING_F_EVENT_IDX and kicks only when
 * {@code vring_need_event(avail_event, new, old)} says so (VIRTIO 1.2 section 2.7.10). On each of
 * {@code -Dkickplug.stall.connections} (default 30; a third of that on the second and third export) fresh
 * connections:
 * <ol>
 * <li>one memory region; queue 0 of 256 entries started (NUM, BASE 0, ADDR, KICK, CALL with NOFD, ENABLE 1);
 * {@code used_event} set to 0;</li>
 * <li>three 4 KiB writes submitted one by one (header, data, status descriptors), each followed by the publication
 * of avail.idx, a full fence and a kick only when the device's {@code avail_event} asks for it;</li>
 * <li>the used ring polled until the first completion;</li>
 * <li>a fourth write submitted the same way, {@code used_event} set to the last used index seen, and the used
 * ring polled until all four completed.</li>
 * </ol>
 * Three exports of one daemon, one per way the device publishes {@code avail_event} or polls: the default
 * ({@code --avail-event enable}), {@code --avail-event pop}, and device-side adaptive polling ({@code kp:poll on},
 * the poll-extension bundle: notifications off while the I/O thread polls).
 *
 * <p>The front-end reads {@code avail_event} and writes {@code used_event} through {@link FrontendClient#layout},
 * as a front-end written against that class does. That method gave the layout of a 64-entry queue whatever size the
 * queue was started with: through it a 256-entry queue's "avail_event" was its {@code used_event}, so the front-end
 * did not kick for the fourth write while the device slept, and the write was never completed (every run failed,
 * in the first connections of each export). It now gives the layout the queue was started with.
 *
 * <p>A request is <em>lost</em> when it is not completed within {@code -Dkickplug.stall.poll.millis} (default
 * 10 s); after three losses the test stops. The failure says whether the device ever took the request
 * ({@code avail_event} reached avail.idx) or took it and did not complete it (the backend). The images live on
 * tmpfs (/dev/shm) when there is one: what is under test is the notification path, and a buffered 4 KiB write to
 * this machine's disk took up to 4.5 s while another process wrote and synced a large file.
 */
class PollQueueStallIT {

    private static final int CONNECTIONS = Integer.getInteger("kickplug.stall.connections", 30);
    private static final long POLL_MILLIS = Long.getLong("kickplug.stall.poll.millis", 10_000);
    private static final int QUEUE_SIZE = 256;
    private static final int WRITE_BYTES = 4096;
    private static final long START_SECONDS = 90;
    /** The export's log line at the end of each session (VhostUserServer, at level info). */
    private static final String SESSION_ENDED = "waiting for the next front-end";

    private static Path work;
    private static Process daemon;
    private static Path daemonErr;

    @BeforeAll
    static void startDaemon() throws Exception {
        Path jar = LauncherJar.built();
        // Short paths: sun_path holds 107 bytes.
        work = Files.createTempDirectory(Path.of("/tmp"), "kp-stall");
        Path images = Files.isDirectory(Path.of("/dev/shm")) ? Files.createTempDirectory(Path.of("/dev/shm"), "kp-stall")
                : work;
        List<String> statements = new ArrayList<>();
        for (String disk : List.of("enable", "pop", "polled")) {
            Path image = images.resolve(disk + ".img");
            try (RandomAccessFile f = new RandomAccessFile(image.toFile(), "rw")) {
                f.setLength(16L << 20);
            }
            String mode = disk.equals("pop") ? "pop" : "enable";
            statements.add("kp:attach --backend file --file " + image + " --avail-event " + mode + " " + disk);
            if (disk.equals("polled")) {
                statements.add("kp:poll " + disk + " on");
            }
            statements.add("kp:vhost " + disk + " --socket " + socket(disk) + " --queues 1");
        }
        Path script = Files.writeString(work.resolve("serve.gosh"), String.join("\n", statements) + "\n");
        List<String> command = LauncherJar.command(jar, work);
        // info: each export logs the end of each session, which the next connection waits for (one front-end at a
        // time: a connection made while the previous session is torn down is refused).
        command.addAll(List.of("--daemon", "--state", "none", "--log-level", "info", "-f", script.toString()));
        daemonErr = work.resolve("daemon.err");
        daemon = new ProcessBuilder(command).directory(work.toFile())
                .redirectInput(Redirect.from(new File("/dev/null"))).redirectError(daemonErr.toFile()).start();
        DaemonStdout stdout = new DaemonStdout(daemon, "daemon");
        try {
            stdout.running.get(START_SECONDS, TimeUnit.SECONDS);
        } catch (Exception e) {
            throw new AssertionError("the daemon did not start: " + stdout.lines + "\n" + daemonLog(), e);
        }
        if (!images.equals(work)) {
            RealGuestHarness.deleteTree(images); // the daemon holds the images open; nothing else needs the names
        }
    }

    @AfterAll
    static void stopDaemon() throws Exception {
        if (daemon != null) {
            daemon.destroy();
            if (!daemon.waitFor(60, TimeUnit.SECONDS)) {
                daemon.destroyForcibly();
            }
        }
        if (work != null) {
            RealGuestHarness.deleteTree(work);
        }
    }

    private static Path socket(String disk) {
        return work.resolve(disk + ".sock");
    }

    private static String daemonLog() {
        try {
            return "--- daemon stderr\n" + Files.readString(daemonErr);
        } catch (Exception e) {
            return "(no daemon log: " + e + ")";
        }
    }

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"enable", "pop", "polled"})
    void aPollQueueWithEventIdxAndNoCallDescriptorCompletesEveryWrite(String disk) throws Exception {
        List<String> lost = new ArrayList<>();
        long slowest = 0;
        // The report's export (the default) gets every connection asked for, the other two a third each.
        int connections = disk.equals("enable") ? CONNECTIONS : Math.max(1, CONNECTIONS / 3);
        for (int c = 0; c < connections; c++) {
            awaitSessionsEnded(disk, c);
            Result r = connection(disk, c);
            slowest = Math.max(slowest, r.fourthNanos);
            if (r.lost != null) {
                lost.add(r.lost);
                if (lost.size() == 3) {
                    lost.add("stopped after " + (c + 1) + " connections");
                    break;
                }
            }
        }
        System.out.printf("PollQueueStallIT %s: %d connections, %d lost, slowest fourth write %.1f ms%n", disk,
                connections, lost.size(), slowest / 1e6);
        assertEquals(List.of(), lost, () -> lost.size() + " of " + connections + " connections lost a write\n"
                + daemonLog());
        assertTrue(daemon.isAlive(), PollQueueStallIT::daemonLog);
    }

    /**
     * Waits until export {@code disk} ended {@code sessions} sessions: it serves one front-end at a time and refuses
     * a connection made while the previous session is still being torn down (its device reset).
     */
    private static void awaitSessionsEnded(String disk, int sessions) throws Exception {
        String line = "vhost-user " + disk + ": front-end disconnected; " + SESSION_ENDED;
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(START_SECONDS);
        while (count(Files.readString(daemonErr), line) < sessions) {
            assertTrue(daemon.isAlive(), PollQueueStallIT::daemonLog);
            assertTrue(System.nanoTime() < deadline, () -> "session " + sessions + " of " + disk + " did not end\n"
                    + daemonLog());
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
        }
    }

    private static int count(String text, String what) {
        int n = 0;
        for (int i = text.indexOf(what); i >= 0; i = text.indexOf(what, i + 1)) {
            n++;
        }
        return n;
    }

    /** What one connection found: how long the fourth write took, and a description of a loss or {@code null}. */
    private record Result(long fourthNanos, String lost) {
    }

    /** One fresh connection doing the sequence of the class comment. */
    private static Result connection(String disk, int number) throws Exception {
        Path memory = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm", work.getFileName() + "-ram")
                : work.resolve("guest-ram");
        try (FrontendClient client = new FrontendClient(socket(disk), memory, FrontendClient.MEMORY_BYTES,
                new VirtqueueFactoryComponent(), new GuestMemoryFactoryComponent())) {
            client.negotiate(VirtioFeatures.RING_EVENT_IDX);
            assertTrue((client.features() & VirtioFeatures.RING_EVENT_IDX) != 0, "the daemon offers EVENT_IDX");
            Queue q = client.startQueue(0, 0, true, QUEUE_SIZE, 0);
            // The front-end's view of the ring, through which it writes used_event and reads avail_event, as a
            // front-end written against FrontendClient does.
            QueueLayout layout = client.layout(0);
            // The driver writes used_event itself, as the sequence says: a reap never moves it.
            q.driver.disableCallbacks();
            setUsedEvent(client, layout, 0);
            for (int slot = 0; slot < 3; slot++) {
                submit(client, q, layout, slot);
            }
            boolean[] done = new boolean[4];
            int completed = 0;
            long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS);
            while (completed == 0 && System.nanoTime() < deadline) {
                completed += reap(q, done);
            }
            if (completed == 0) {
                return new Result(0, state(disk, number, "none of the first three writes completed", client, layout,
                        done));
            }
            long fourth = System.nanoTime();
            setUsedEvent(client, layout, client.memory.readU16Acquire(layout.usedRing() + 2) & 0xffff);
            submit(client, q, layout, 3);
            deadline = fourth + TimeUnit.MILLISECONDS.toNanos(POLL_MILLIS);
            while (completed < 4 && System.nanoTime() < deadline) {
                completed += reap(q, done);
            }
            long took = System.nanoTime() - fourth;
            if (completed < 4) {
                return new Result(took, state(disk, number, completed + " of 4 writes completed", client, layout,
                        done));
            }
            for (int slot = 0; slot < 4; slot++) {
                assertEquals(VirtioBlk.S_OK, client.status(slot), disk + " connection " + number + " write " + slot);
            }
            return new Result(took, null);
        }
    }

    /**
     * One 4 KiB write as the sequence submits it: the chain added and avail.idx published (release), a full fence,
     * then {@code avail_event} read from the front-end's view of the used ring and a kick only when
     * {@code vring_need_event(avail_event, new, old)} (VIRTIO 1.2 section 2.7.10) says the device asked for one.
     */
    private static void submit(FrontendClient client, Queue q, QueueLayout layout, int slot) throws Exception {
        // One request per call from avail.idx 0: the slot is the index before it, as the driver counts.
        int old = slot;
        int now = slot + 1;
        client.submitNoKick(q, slot, VirtioBlk.T_OUT, slot * 8L, WRITE_BYTES);
        VarHandle.fullFence(); // section 2.7.10: the index published before avail_event is read
        int availEvent = client.memory.readU16Acquire(layout.usedRing() + 4 + 8L * layout.size()) & 0xffff;
        if (needEvent(availEvent, now, old)) {
            q.kick();
        }
    }

    /** Linux's vring_need_event: whether moving the index from {@code old} to {@code now} passed {@code event}. */
    static boolean needEvent(int event, int now, int old) {
        return ((now - event - 1) & 0xffff) < ((now - old) & 0xffff);
    }

    /** used_event (VIRTIO 1.2 section 2.7.6: after the available ring's entries), then a full fence. */
    private static void setUsedEvent(FrontendClient client, QueueLayout layout, int value) {
        client.memory.writeU16(layout.availRing() + 4 + 2L * layout.size(), (short) value);
        client.memory.fullFence();
    }

    private static int reap(Queue q, boolean[] done) {
        int n = 0;
        for (UsedBuffer u; (u = q.driver.getUsed()) != null;) {
            done[(Integer) u.token()] = true;
            n++;
        }
        if (n == 0) {
            Thread.onSpinWait(); // a poll queue: the driver polls the used ring, no interrupt comes
        }
        return n;
    }

    /**
     * The ring as the front-end sees it when it gives up. avail_event (section 2.7.10, after the used ring's
     * elements) behind avail.idx means the device never looked at the requests after it (a kick it asked for was
     * not sent or not read); at avail.idx it took them all and the backend did not complete them.
     */
    private static String state(String disk, int number, String what, FrontendClient client, QueueLayout layout,
            boolean[] done) {
        int size = layout.size();
        int availIdx = client.memory.readU16(layout.availRing() + 2) & 0xffff;
        int availEvent = client.memory.readU16(layout.usedRing() + 4 + 8L * size) & 0xffff;
        return String.format("%s connection %d: %s in %d ms (done %s): avail.idx %d, avail_event %d (%s), used.idx %d,"
                + " used_event %d", disk, number, what, POLL_MILLIS, Arrays.toString(done), availIdx, availEvent,
                availEvent == availIdx ? "the device took every request" : "the device did not look at every request",
                client.memory.readU16(layout.usedRing() + 2) & 0xffff,
                client.memory.readU16(layout.availRing() + 4 + 2L * size) & 0xffff);
    }
}
