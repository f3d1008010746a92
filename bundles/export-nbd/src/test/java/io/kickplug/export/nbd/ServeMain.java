package io.kickplug.export.nbd;

import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.blk.manager.DiskRegistry;
import io.kickplug.blk.testkit.InProcessHost;
import java.io.IOException;

/**
 * For measurements outside the tests (docs/benchmarks.md): a disk manager with one disk exported writable on a Unix
 * socket until standard input ends. {@code ServeMain SOCKET KIND SIZE} with KIND memory or null.
 */
public final class ServeMain {

    private ServeMain() {
    }

    public static void main(String[] args) throws IOException {
        String socket = args[0];
        String kind = args[1];
        long size = Long.parseLong(args[2]);
        DiskRegistry disks = InProcessHost.registry();
        DiskSpec spec = DiskSpec.memory("d0", size);
        if (kind.equals("null")) {
            spec = spec.withBackend(new BackendSpec("null", null, size, false, false, false, 0));
        }
        disks.attach(spec);
        NbdService service = new NbdService(disks, NbdService.Store.NONE);
        service.start(Listener.unix(socket), 16);
        service.export("d0", "d0", true);
        System.out.println("ready");
        System.out.flush();
        while (System.in.read() >= 0) {
            // serve until standard input ends
        }
        service.close();
        disks.close();
    }
}
