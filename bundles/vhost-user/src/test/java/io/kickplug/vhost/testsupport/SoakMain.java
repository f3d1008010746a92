package io.kickplug.vhost.testsupport;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The session soak against a running Kickplug daemon (docs/service.md, "Resources and clean-up"): it plays the
 * front-end and reads the daemon's /proc/PID to check that every session leaves nothing behind.
 *
 * <p>Args: {@code SOCKET DAEMON_PID [SESSIONS=1000] [SEED]}. The export must have at least 2 queues and a disk
 * of at least 128 KiB. Exit status 0 when every session left nothing behind and the daemon's RSS after the
 * last session is within 10% of the one after session 10, 1 otherwise.
 */
public final class SoakMain {

    private SoakMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length < 2) {
            System.err.println("usage: SoakMain SOCKET DAEMON_PID [SESSIONS] [SEED]");
            System.exit(2);
        }
        Path socket = Path.of(args[0]);
        long pid = Long.parseLong(args[1]);
        int sessions = args.length > 2 ? Integer.parseInt(args[2]) : 1000;
        long seed = args.length > 3 ? Long.parseLong(args[3]) : System.nanoTime();
        Path shm = Files.isDirectory(Path.of("/dev/shm")) ? Path.of("/dev/shm") : Path.of(System.getProperty(
                "java.io.tmpdir"));
        Footprint daemon = Footprint.of(pid);
        long idleThreads = daemon.threadsNamed(SessionSoak.VHOST_THREADS);
        // The daemon's session is over when its session and kick threads have ended.
        SessionSoak.IdleWait idle = (timeout, unit) -> Footprint.await(
                () -> daemon.threadsNamed(SessionSoak.VHOST_THREADS) <= idleThreads, unit.toMillis(timeout));
        try {
            SessionSoak.Result r = new SessionSoak(socket, shm, 256L << 20, seed, pid).run(sessions, idle,
                    System.out::println);
            System.out.println(r.report());
            boolean rssOk = r.end().rssKiB() <= r.after10().rssKiB() * 1.10;
            System.out.println("RSS after " + sessions + " within 10% of RSS after 10: " + rssOk);
            System.exit(r.mappingsLeft() == 0 && rssOk ? 0 : 1);
        } catch (AssertionError e) {
            System.out.println("FAILED: " + e.getMessage());
            System.exit(1);
        }
    }
}
