package io.kickplug.shell;

import java.time.LocalTime;
import java.time.temporal.ChronoUnit;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Why a plugin service is not bound now: the strategies, backends, filters and poll policies whose service went
 * away, with the bundle that had registered it and what happened to that bundle (stopped, uninstalled, updated),
 * for {@code kp:notify} and {@code kp:stats} to say why a disk uses {@code immediate} instead of the strategy it is
 * configured with. A name that comes back (registered again) is forgotten. Plain class, fed by
 * {@link PluginEvents} from the framework's service and bundle events.
 */
final class Departures {

    /** One service gone: {@code what} is "stopped", "uninstalled", "updated" or "unregistered". */
    record Departure(PluginKind kind, String name, String bundle, String version, long bundleId, String what,
            LocalTime at) {

        /** "bundle io.example.coalesce 1.0.0 [42] uninstalled at 07:41:02" */
        String text() {
            return "bundle " + bundle + " " + version + " [" + bundleId + "] " + what + " at " + at;
        }
    }

    private final Map<String, Departure> gone = new ConcurrentHashMap<>();

    private static String key(PluginKind kind, String name) {
        return kind.name() + "/" + name;
    }

    /** A service of {@code p} was unregistered; its bundle is {@code bundleStopping} or not. */
    void unregistered(Provided p, boolean bundleStopping) {
        gone.put(key(p.kind(), p.name()), new Departure(p.kind(), p.name(), p.bundle(), p.version(), p.bundleId(),
                bundleStopping ? "stopped" : "unregistered it", LocalTime.now().truncatedTo(ChronoUnit.SECONDS)));
    }

    /** A service of {@code p} was registered: it is not gone any more. */
    void registered(Provided p) {
        gone.remove(key(p.kind(), p.name()));
    }

    /**
     * Bundle {@code bundleId} went on from stopped: to "uninstalled" or "updated" ({@code what}). Its departures
     * say so.
     */
    void bundleEvent(long bundleId, String what) {
        gone.replaceAll((k, d) -> d.bundleId() == bundleId
                ? new Departure(d.kind(), d.name(), d.bundle(), d.version(), d.bundleId(), what, d.at()) : d);
    }

    /** Why the {@code kind} named {@code name} is not bound, or {@code null} when nothing is known. */
    Departure why(PluginKind kind, String name) {
        return gone.get(key(kind, name));
    }

    /** The text of {@link #why}, or {@code null}. */
    String whyText(PluginKind kind, String name) {
        Departure d = why(kind, name);
        return d == null ? null : d.text();
    }
}
