package io.kickplug.guest.engine;

/**
 * The modelled costs of {@link VirtualTime} besides exit and injection (those are the machine's, {@link MachineConfig}); docs/seeds.md,
 * "Virtual time", gives the source of each default.
 *
 * @param ioeventfdWakeNs from a notify to the moment a sleeping I/O thread runs (eventfd signal, wake-up of
 *     a thread blocked in ppoll on another core)
 * @param guestSubmitNs {@link Charging#MODEL} only: guest CPU per request submitted (fio, block layer, driver)
 * @param vqAddNs {@link Charging#MODEL} only: guest CPU of adding one chain to the ring, under the vq lock
 * @param guestCompleteNs {@link Charging#MODEL} only: guest CPU per request completed (handler, callback)
 * @param deviceRequestNs {@link Charging#MODEL} only: device CPU per request (pop, parse, submit, push)
 * @param pollNs one poll of the used ring by a vCPU that spins for a hipri completion
 * @param threadWakeNs from a release to the moment a thread that blocked on the lock (futex wait, a yielded
 *     coroutine's I/O thread in ppoll) runs again: the device's tracked-requests lock ({@link VirtualWaits})
 * @param irqfdNs the device's cost of sending one used-buffer notification: the eventfd write(2) on the irqfd
 *     (QEMU's {@code virtio_notify_irqfd}), charged to the sending I/O thread
 * @param spinIterationNs {@link Charging#MODEL} only: one turn of a lock's spin loop ({@code cpu_relax()}, the
 *     x86 PAUSE instruction, and two reads of the lock word); measured charging measures it on the host
 * @param trackedSectionNs {@link Charging#MODEL} only: one critical section of the tracked-requests list (an
 *     insert or a removal with the lock held), charged while the lock is held
 * @param coroutineSwitchNs {@link Charging#MODEL} only: one coroutine switch, a yielding lock's waiter's yield
 *     when it queues and its re-entry after the hand-off
 * @param coScheduleNs {@link Charging#MODEL} only: the releaser's scheduling of a yielding lock's waiter on its
 *     own thread ({@code aio_co_schedule}), charged while the lock is handed over
 * @param futexWaitNs {@link Charging#MODEL} only: a contended mutex acquirer's futex wait until the kernel checks
 *     the lock word (a system call's entry); a release before then lets it take the lock without sleeping
 */
public record ModelCosts(long ioeventfdWakeNs, long guestSubmitNs, long vqAddNs, long guestCompleteNs,
        long deviceRequestNs, long pollNs, long threadWakeNs, long irqfdNs, long spinIterationNs,
        long trackedSectionNs, long coroutineSwitchNs, long coScheduleNs, long futexWaitNs) {

    /** Each figure's source: docs/seeds.md, "Virtual time". */
    public static final ModelCosts DEFAULTS = new ModelCosts(5_000, 1_500, 200, 1_000, 2_500, 200, 5_000, 1_000, 20, 400, 100,
            600, 300);

    public ModelCosts {
        if (ioeventfdWakeNs < 0 || vqAddNs < 0 || guestSubmitNs < 0 || guestCompleteNs < 0 || deviceRequestNs < 0
                || pollNs <= 0 || threadWakeNs < 0 || irqfdNs < 0 || spinIterationNs < 0 || trackedSectionNs < 0
                || coroutineSwitchNs < 0 || coScheduleNs < 0 || futexWaitNs < 0) {
            throw new IllegalArgumentException("costs must not be negative (poll positive): " + this);
        }
    }

    /** The names {@link #with} takes, in the record's order. */
    public static final java.util.List<String> NAMES = java.util.Arrays.stream(ModelCosts.class.getRecordComponents())
            .map(java.lang.reflect.RecordComponent::getName).toList();

    /**
     * These costs with some replaced: {@code "trackedSectionNs=200,coScheduleNs=0"} (the names of {@link #NAMES});
     * for a sensitivity run of the model ({@code -Dkickplug.model.costs=...}).
     *
     * @throws IllegalArgumentException on an unknown name or a value that is not a non-negative integer
     */
    public ModelCosts with(String overrides) {
        long[] v = new long[NAMES.size()];
        java.lang.reflect.RecordComponent[] parts = ModelCosts.class.getRecordComponents();
        try {
            for (int i = 0; i < v.length; i++) {
                v[i] = (long) parts[i].getAccessor().invoke(this);
            }
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(e);
        }
        if (overrides != null && !overrides.isBlank()) {
            for (String pair : overrides.split(",")) {
                String[] kv = pair.trim().split("=", 2);
                int i = NAMES.indexOf(kv[0].trim());
                if (i < 0 || kv.length != 2) {
                    throw new IllegalArgumentException("model cost '" + pair + "': expected NAME=NS, NAME one of "
                            + NAMES);
                }
                try {
                    v[i] = Long.parseLong(kv[1].trim());
                } catch (NumberFormatException e) {
                    throw new IllegalArgumentException("model cost '" + pair + "': not a number of ns");
                }
            }
        }
        return new ModelCosts(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7], v[8], v[9], v[10], v[11], v[12]);
    }
}
