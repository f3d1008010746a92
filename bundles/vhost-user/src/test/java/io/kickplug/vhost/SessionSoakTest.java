package io.kickplug.vhost;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.vhost.testsupport.ExportedDisk;
import io.kickplug.vhost.testsupport.SessionSoak;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Many vhost-user sessions in a row against one export, ended in random ways (clean close, RESET_OWNER, a
 * killed front-end, a disconnect in the middle of I/O), each mapping 256 MiB of guest memory and running I/O
 * on two queues: after each session its mappings are gone within 1 s without a GC, no descriptor a session opened is open and Java
 * threads are back at the baseline, and the resident set after the last session is within 10% of the one after
 * session 10. CI runs {@value #DEFAULT_SESSIONS} sessions; {@code -Dkickplug.soak.sessions=1000} runs the full
 * soak (docs/service.md, "Resources and clean-up"); {@code -Dkickplug.soak.seed=N} repeats a run's endings.
 */
class SessionSoakTest {

    static final int DEFAULT_SESSIONS = 100;
    private static final long MEMORY_BYTES = 256L << 20;

    @TempDir
    Path dir;

    @Test
    void sessionsLeaveNoMappingsDescriptorsOrThreadsBehind() throws Exception {
        int sessions = Integer.getInteger("kickplug.soak.sessions", DEFAULT_SESSIONS);
        long seed = Long.getLong("kickplug.soak.seed", System.nanoTime());
        Path shm = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : dir;
        try (ExportedDisk disk = ExportedDisk.memory("soak", 16 << 20, 2, 2, dir)) {
            SessionSoak soak = new SessionSoak(disk.server.socketPath(), shm, MEMORY_BYTES, seed, 0);
            SessionSoak.Result r = soak.run(sessions, disk.server::awaitNoFrontend, System.out::println);
            System.out.println("SessionSoakTest " + r.report());
            assertEquals(sessions, disk.server.status().sessions() - 1, "every session reached the export");
            assertEquals(0, r.mappingsLeft(), "no ended session's memory is still mapped");
            assertEquals(List.of(), r.fdsOpened(), "no descriptor opened by a session is still open");
            assertEquals(r.baseline().threads(), r.end().threads(), "Java threads at the baseline");
            if (sessions >= 20) {
                assertTrue(r.end().rssKiB() <= r.after10().rssKiB() * 1.10,
                        "RSS after " + sessions + " sessions within 10% of RSS after 10: " + r.report());
            }
        }
    }
}
