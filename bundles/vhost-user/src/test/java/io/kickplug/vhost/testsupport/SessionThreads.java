package io.kickplug.vhost.testsupport;

import java.util.Map;
import java.util.Set;

/** Where a vhost-user session thread is, from its stack: lets a test order its steps against the session's. */
public final class SessionThreads {

    private SessionThreads() {
    }

    /**
     * Whether thread {@code name} is waiting (timed or not) inside one of {@code methods} ("SimpleClassName.method",
     * e.g. "VirtioBlkDevice$Active.stop" for the device reset's wait for its I/O threads). A state alone is not
     * enough: an idle session thread may wait too, in its socket read.
     */
    public static boolean waitsIn(String name, Set<String> methods) {
        for (Map.Entry<Thread, StackTraceElement[]> e : Thread.getAllStackTraces().entrySet()) {
            Thread t = e.getKey();
            if (!t.getName().equals(name) || (t.getState() != Thread.State.TIMED_WAITING
                    && t.getState() != Thread.State.WAITING)) {
                continue;
            }
            for (StackTraceElement f : e.getValue()) {
                String cls = f.getClassName().substring(f.getClassName().lastIndexOf('.') + 1);
                if (methods.contains(cls + "." + f.getMethodName())) {
                    return true;
                }
            }
        }
        return false;
    }
}
