package io.kickplug.vhost.backend;

import java.util.HashMap;
import java.util.Map;

/** The pages the dirty logs marked while tracing ({@code -Dkickplug.vhost.dirtylog.trace=true}), for tests. */
public final class DirtyLogTrace {

    private DirtyLogTrace() {
    }

    public static boolean enabled() {
        return DirtyLog.TRACE;
    }

    /** Forgets every traced page. */
    public static void clear() {
        DirtyLog.TRACED.clear();
    }

    /** Page number to the nanoTime of its last mark, over the logs whose name ends with {@code suffix}. */
    public static Map<Long, Long> pages(String suffix) {
        Map<Long, Long> all = new HashMap<>();
        DirtyLog.TRACED.forEach((name, m) -> {
            if (name.endsWith(suffix)) {
                m.forEach((page, t) -> all.merge(page, t, Math::max));
            }
        });
        return all;
    }
}
