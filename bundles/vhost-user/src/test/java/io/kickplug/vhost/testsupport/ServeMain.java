package io.kickplug.vhost.testsupport;

import java.nio.file.Path;

/** Manual tool: serves a file image over vhost-user until killed. Args: SOCKET IMAGE SIZE_MB QUEUES. */
public final class ServeMain {
    public static void main(String[] args) throws Exception {
        ExportedDisk disk = new ExportedDisk("manual", new ImageFileBackend(Path.of(args[1]),
                Long.parseLong(args[2]) << 20), Integer.parseInt(args[3]), 1, Path.of(args[0]));
        System.out.println("serving on " + disk.server.socketPath());
        while (true) {
            Thread.sleep(5000);
            System.out.println(io.kickplug.vhost.server.StatusTable.format(java.util.List.of(disk.server.status())));
        }
    }
}
