package io.kickplug.export.nbd;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A real disk manager (memory, null and file backends) and an NBD service with a server on a Unix socket in a fresh
 * folder: what the tests export and connect to.
 */
final class Served implements AutoCloseable {

    final Path dir;
    final Path socket;
    final DiskRegistry disks = InProcessHost.registry();
    final NbdService service;

    Served() throws IOException {
        this(0);
    }

    /** @param maxConnections 0: the default of the commands */
    Served(int maxConnections) throws IOException {
        dir = Files.createTempDirectory("kp-nbd-");
        socket = dir.resolve("nbd.sock");
        service = new NbdService(disks, NbdService.Store.NONE);
        service.start(Listener.unix(socket.toString()), maxConnections == 0 ? 16 : maxConnections);
    }

    /** A writable memory disk exported under its own name. */
    Served memory(String name, long size) {
        disks.attach(DiskSpec.memory(name, size));
        service.export(name, name, true);
        return this;
    }

    /** A memory disk exported read-only. */
    Served readOnly(String name, long size) {
        disks.attach(DiskSpec.memory(name, size));
        service.export(name, name, false);
        return this;
    }

    /** A file disk over {@code image}, exported writable. */
    Served file(String name, Path image) throws IOException {
        disks.attach(DiskSpec.memory(name, Files.size(image)).withBackend(new BackendSpec("file", image.toString(),
                Files.size(image), false, false)));
        service.export(name, name, true);
        return this;
    }

    /** A null disk (reads are zeroes), exported writable. */
    Served nullDisk(String name, long size) {
        disks.attach(DiskSpec.memory(name, size).withBackend(new BackendSpec("null", null, size, false, false, true, 0)));
        service.export(name, name, true);
        return this;
    }

    String uri(String export) {
        return "nbd+unix:///" + export + "?socket=" + socket;
    }

    @Override
    public void close() throws IOException {
        service.close();
        disks.close();
        try (var files = Files.list(dir)) {
            for (Path p : files.toList()) {
                Files.deleteIfExists(p);
            }
        }
        Files.deleteIfExists(dir);
    }
}
