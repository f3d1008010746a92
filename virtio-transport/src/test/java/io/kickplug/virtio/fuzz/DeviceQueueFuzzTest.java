package io.kickplug.virtio.fuzz;

import io.kickplug.virtio.queue.SplitDeviceQueue;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.EdgeCasesMode;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;
import net.jqwik.api.lifecycle.AddLifecycleHook;

/**
 * Structure-aware fuzzing of {@link SplitDeviceQueue} (after rust-vmm's fuzz/ targets): random descriptor
 * tables, indirect tables, available rings and feature sets in guest memory, then a random sequence of
 * device-queue calls and driver stores. {@link QueueRun} lists the properties checked.
 *
 * <p>The default tries keep {@code mvn verify} short; {@code -Dkickplug.fuzz.tries=N} sets a long run.
 */
@AddLifecycleHook(FuzzTries.class)
class DeviceQueueFuzzTest {
    private static final FuzzMemory MEMORY = new FuzzMemory();

    @Provide
    Arbitrary<VirtioQueueInput> queueInputs() {
        return VirtioQueueInputs.inputs(256, 40);
    }

    @Property(tries = 3000, edgeCases = EdgeCasesMode.NONE)
    void deviceQueueSurvivesAnyRing(@ForAll("queueInputs") VirtioQueueInput input) {
        new QueueRun(MEMORY, input).run();
        FuzzTries.tick("deviceQueueSurvivesAnyRing");
    }
}
