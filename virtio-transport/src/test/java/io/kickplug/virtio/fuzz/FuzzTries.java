package io.kickplug.virtio.fuzz;

import net.jqwik.api.lifecycle.AroundPropertyHook;
import net.jqwik.api.lifecycle.PropagationMode;
import net.jqwik.api.lifecycle.PropertyExecutionResult;
import net.jqwik.api.lifecycle.PropertyExecutor;
import net.jqwik.api.lifecycle.PropertyLifecycleContext;

/**
 * Sets the number of fuzz inputs from the system property {@value #PROPERTY} (for long runs), leaving the
 * bounded default of each {@code @Property} for {@code mvn verify}:
 * {@code mvn -pl virtio-transport test -Dtest='*FuzzTest' -Dkickplug.fuzz.tries=1000000}.
 */
public final class FuzzTries implements AroundPropertyHook {
    public static final String PROPERTY = "kickplug.fuzz.tries";

    @Override
    public PropertyExecutionResult aroundProperty(PropertyLifecycleContext context, PropertyExecutor property) {
        String tries = System.getProperty(PROPERTY);
        if (tries != null && !tries.isBlank()) {
            context.attributes().setTries(Integer.parseInt(tries.trim()));
        }
        long start = System.nanoTime();
        PropertyExecutionResult result = property.execute();
        PROGRESS.remove(context.label());
        // One line per property, for the record of long runs: inputs tried and wall time.
        System.out.printf("kickplug fuzz: %s: %d inputs in %.1f s, %s%n", context.label(), result.countTries(),
                (System.nanoTime() - start) / 1e9, result.status());
        return result;
    }

    private static final java.util.Map<String, long[]> PROGRESS = new java.util.concurrent.ConcurrentHashMap<>();

    /**
     * Counts one input of {@code property}; every 100,000 inputs prints a progress line, so that a long
     * run that has to be stopped still leaves a record of how far it got.
     */
    public static void tick(String property) {
        long[] p = PROGRESS.computeIfAbsent(property, k -> new long[] {0, System.nanoTime()});
        if (++p[0] % 100_000 == 0) {
            System.out.printf("kickplug fuzz: %s: %d inputs so far, %.1f s%n", property, p[0],
                    (System.nanoTime() - p[1]) / 1e9);
        }
    }

    @Override
    public PropagationMode propagateTo() {
        // Declared on a test class, it must reach the properties inside.
        return PropagationMode.ALL_DESCENDANTS;
    }

    @Override
    public int aroundPropertyProximity() {
        // Outside jqwik's own hooks, so the new value is in place before the property runs.
        return -100;
    }
}
