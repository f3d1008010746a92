package io.kickplug.guest.kick;

import io.kickplug.api.guest.KickPolicy;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Kick policies by name: the DS services bound so far, or the built-in two outside OSGi. */
public final class KickPolicies {

    private final Map<String, KickPolicy> byName = new ConcurrentHashMap<>();

    /** Under-lock and outside-lock, for use without OSGi. */
    public static KickPolicies builtIn() {
        KickPolicies p = new KickPolicies();
        p.add(UnderLockKick.NAME, new UnderLockKick());
        p.add(OutsideLockKick.NAME, new OutsideLockKick());
        return p;
    }

    public void add(String name, KickPolicy policy) {
        byName.put(name, policy);
    }

    /** Removes {@code name} if it is still bound to {@code policy}. */
    public void remove(String name, KickPolicy policy) {
        byName.remove(name, policy);
    }

    /**
     * @throws IllegalArgumentException when no policy has that name, listing those that exist
     */
    public KickPolicy get(String name) {
        KickPolicy p = byName.get(name);
        if (p == null) {
            throw new IllegalArgumentException("no kick policy named '" + name + "' (available: "
                    + String.join(", ", names()) + ")");
        }
        return p;
    }

    public List<String> names() {
        return byName.keySet().stream().sorted().toList();
    }
}
