package io.kickplug.qmp;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.control.BlockExports;
import io.kickplug.api.control.NbdServerControl;
import io.kickplug.api.control.ThrottleControl;
import io.kickplug.api.notify.NotificationControl;
import java.util.Map;

/**
 * What the engine drives: the services of the other bundles (any may be absent: null) and the runtime's own acts.
 * The DS component supplies them from its references; tests supply the real disk manager and small fakes.
 */
public interface QmpServices {

    /** The disk manager, or null when the block-device bundle is away. */
    DiskManager disks();

    /** The exports of {@code type} ({@code vhost-user-blk}, {@code nbd}), or null when no bundle serves them. */
    BlockExports exports(String type);

    NbdServerControl nbdServer();

    ThrottleControl throttle();

    NotificationControl notifications();

    /**
     * Updates bundle {@code bundle} (a symbolic name, with or without the {@code io.kickplug.} prefix) and waits
     * until every configured disk is attached again.
     *
     * @return what to answer ({@code bundle}, {@code version}, {@code disks})
     * @throws IllegalArgumentException for an unknown bundle or the api bundle
     */
    Map<String, Object> swap(String bundle);

    /** Ends the runtime (the daemon exits with status 0), after the reply is sent. */
    void quit();

    /** Where the engine keeps its nodes, objects and export ids across bundle updates. */
    interface Store {
        /** The saved state (JSON), or null. */
        String load();

        void save(String state);

        Store NONE = new Store() {
            @Override
            public String load() {
                return null;
            }

            @Override
            public void save(String state) {
            }
        };
    }
}
