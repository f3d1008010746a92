package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.blk.testkit.InProcessHost;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.guest.virtio.RawRingGuest;
import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code kp:detach} gives everything back at once: the disk's I/O threads, its worker pool and those of its
 * exported devices, and the backend's file. No thread of the disk and no extra descriptor is left after
 * {@link DiskRegistry#detach} returns.
 */
class DetachReleaseTest {

    @TempDir
    Path dir;

    private static List<String> threadsOf(String disk) {
        return Thread.getAllStackTraces().keySet().stream().filter(Thread::isAlive).map(Thread::getName)
                .filter(n -> n.startsWith("kickplug-blk-" + disk + "-")).sorted().toList();
    }

    /** This process's open descriptors, number to target, without the listing's own (the fd directory's). */
    private static Map<String, String> fds() {
        Map<String, String> fds = new TreeMap<>();
        String listing = "/proc/" + ProcessHandle.current().pid() + "/fd";
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            s.forEach(p -> {
                try {
                    String target = Files.readSymbolicLink(p).toString();
                    if (!target.equals(listing)) {
                        fds.put(p.getFileName().toString(), target);
                    }
                } catch (IOException e) {
                    // closed meanwhile by another thread
                }
            });
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return fds;
    }

    /**
     * The descriptors open in {@code after} that were not open, to the same target, in {@code before}; not class-path
     * jars: the class loader opens a jar when it first loads a class from it and keeps it open for good (a class
     * first loaded on some timing-dependent path would add one), and a disk never opens a jar.
     */
    private static Map<String, String> added(Map<String, String> before, Map<String, String> after) {
        Map<String, String> added = new TreeMap<>(after);
        added.entrySet().removeIf(e -> e.getValue().equals(before.get(e.getKey())) || e.getValue().endsWith(".jar"));
        return added;
    }

    private static void writeAndRead(RawRingGuest guest, int q) throws InterruptedException {
        byte[] data = new byte[4096];
        data[0] = 42;
        assertEquals(VirtioBlk.S_OK, guest.request(q, VirtioBlk.T_OUT, 8, data, 0, Duration.ofSeconds(10)).status());
        assertEquals(42, guest.request(q, VirtioBlk.T_IN, 8, null, 4096, Duration.ofSeconds(10)).data()[0]);
        // A small read or write that finds the worker pool idle may run on the I/O thread (the page-cache inline
        // path) when it is fast, so whether those two reach the pool depends on timing; a flush never runs inline.
        assertEquals(VirtioBlk.S_OK, guest.request(q, VirtioBlk.T_FLUSH, 0, null, 0, Duration.ofSeconds(10)).status());
    }

    @Test
    void detachEndsTheDisksThreadsPoolsAndFilesIncludingThoseOfItsExports() throws Exception {
        Path image = dir.resolve("disk.img");
        Files.write(image, new byte[1 << 20]);
        DiskRegistry registry = InProcessHost.registry();
        try {
            writeAndRead(registry, image, "warm"); // the JDK opens what it opens once (class files, /dev/random)
            Map<String, String> fdsBefore = fds();
            assertEquals(List.of(), threadsOf("d1"));

            writeAndRead(registry, image, "d1");
            assertTrue(threadsOf("d1").stream().anyMatch(n -> n.contains("-worker")), "the export's pool ran");
            assertTrue(threadsOf("d1").stream().anyMatch(n -> n.contains("-io")), threadsOf("d1").toString());

            registry.detach("d1");
            assertEquals(List.of(), threadsOf("d1"), "threads of the disk and its export after detach");
            assertEquals(Map.of(), added(fdsBefore, fds()), "descriptors opened since and still open after detach");
        } finally {
            registry.close();
        }
    }

    /**
     * Attaches a file disk with a worker pool, runs I/O on it through the simulated guest and through an
     * exported device behind a second transport (as vhost-user does), and stops that transport.
     */
    private static void writeAndRead(DiskRegistry registry, Path image, String name) throws Exception {
        registry.attach(DiskSpec.file(name, image.toString(), false).withQueues(2, 64).withIoThreads(2, List.of())
                .withWorkers(2));
        writeAndRead(new RawRingGuest(registry.port(name)).init(-1L, 2, 64), 1);
        VirtioBlkDevice exported = registry.exportDevice(name, 1);
        TransportInstance transport = new TransportFactoryComponent(new VirtqueueFactoryComponent()).create(TransportKind.MMIO, exported,
                new GuestMemoryFactoryComponent().allocate(1 << 20));
        writeAndRead(new RawRingGuest(transport.port()).init(-1L, 1, 64), 0);
        transport.close();
        if (name.equals("warm")) {
            registry.detach(name);
        }
    }
}
