package io.kickplug.sdk.testkit;

import io.kickplug.blk.notify.NotifierRegistry;

/** The device's rule for strategy names (what {@code kp:notify} accepts). */
final class CompletionNotifierNames {

    private CompletionNotifierNames() {
    }

    static String check(String name) {
        return NotifierRegistry.checkName(name);
    }
}
