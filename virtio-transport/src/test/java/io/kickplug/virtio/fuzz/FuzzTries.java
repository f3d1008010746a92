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
        // One line per property, for the record of long runs: inputs tried and wall time.
        System.out.printf("kickplug fuzz: %s: %d inputs in %.1f s, %s%n", context.label(), result.countTries(),
                (System.nanoTime() - start) / 1e9, result.status());
        return result;
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
