package io.kickplug.shell;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.poll.PollPolicy;
import java.util.List;

/**
 * The kinds of plugin a bundle can register, each a service interface of the api named by a service property: what
 * {@code kp:install} reports, and what {@code kp:strategies}, {@code kp:backends}, {@code kp:filters} and
 * {@code kp:poll-policies} list with the bundle that provides each.
 */
enum PluginKind {
    STRATEGY("strategy", "strategies", CompletionNotifier.class.getName(), CompletionNotifier.PROPERTY),
    BACKEND("backend", "backends", BackendFactory.class.getName(), BackendFactory.PROPERTY_KIND),
    FILTER("filter", "filters", BackendFilter.class.getName(), BackendFilter.PROPERTY_NAME),
    POLL_POLICY("poll policy", "poll policies", PollPolicy.class.getName(), PollPolicy.PROPERTY);

    static final List<PluginKind> ALL = List.of(values());

    final String label;
    final String plural;
    final String serviceClass;
    final String property;

    PluginKind(String label, String plural, String serviceClass, String property) {
        this.label = label;
        this.plural = plural;
        this.serviceClass = serviceClass;
        this.property = property;
    }

    /** The kind whose service interface {@code objectClass} names, or {@code null}. */
    static PluginKind of(String[] objectClass) {
        if (objectClass == null) {
            return null;
        }
        for (String c : objectClass) {
            for (PluginKind k : values()) {
                if (k.serviceClass.equals(c)) {
                    return k;
                }
            }
        }
        return null;
    }
}
