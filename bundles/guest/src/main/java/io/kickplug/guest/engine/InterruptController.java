package io.kickplug.guest.engine;

import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.guest.transport.InterruptRouting;
import io.kickplug.guest.virtio.VirtioBlkDriver;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntConsumer;

/**
 * The guest's interrupt controller for one machine: delivers a vector to the vCPUs that handle the queues
 * mapped to it (queue q's handler is vCPU q % vcpus, its MSI-X affinity), and the configuration vector also to
 * queue 0's. With one line (virtio-mmio, virtio-pci INTx) or one vector shared by the queues this fans a raise
 * out to every vCPU owning a queue; with a vector per queue (MSI-X) each goes to exactly one vCPU. An MSI-X
 * vector carries its cause; a line's cause is read by the handler.
 */
final class InterruptController {
    /** Per vector (or line): the vCPUs it is delivered to; empty until they run. */
    private volatile VcpuThread[][] targets = new VcpuThread[0][];
    private volatile InterruptRouting routing;

    /** The interrupts of one device generation: a removal signal of an older one is ignored by the machine. */
    GuestInterrupts connect(int generation, IntConsumer removed) {
        return new GuestInterrupts() {
            @Override
            public void raise(int vector) {
                deliver(vector);
            }

            @Override
            public void deviceRemoved() {
                removed.accept(generation);
            }
        };
    }

    /** Routes the driver's vectors (after find_vqs, and again after a re-probe) to the handler vCPUs. */
    void route(VirtioBlkDriver driver, List<VcpuThread> handlers) {
        InterruptRouting r = driver.routing();
        int highest = r.configVector();
        for (int q = 0; q < r.queues(); q++) {
            highest = Math.max(highest, r.queueVector(q));
        }
        VcpuThread[][] t = new VcpuThread[highest + 1][];
        VcpuThread queue0 = handlers.get(0);
        for (int vector = 0; vector <= highest; vector++) {
            List<VcpuThread> to = new ArrayList<>();
            for (int q : r.queuesOf(vector)) {
                // A poll queue has no handler: nothing takes its interrupts.
                VcpuThread handler = handlers.get(q);
                if (handler != null && !to.contains(handler)) {
                    to.add(handler);
                }
            }
            if (vector == r.configVector() && !to.contains(queue0)) {
                to.add(queue0);
            }
            t[vector] = to.toArray(VcpuThread[]::new);
        }
        routing = r;
        targets = t;
    }

    private void deliver(int vector) {
        VcpuThread[][] t = targets;
        if (vector < 0 || vector >= t.length) {
            return; // not mapped (or before the vCPUs run): nobody handles it
        }
        int cause = routing.cause(vector);
        for (VcpuThread v : t[vector]) {
            v.interrupt(cause);
        }
    }

    /** The ids of the vCPUs an interrupt on {@code vector} is delivered to, in order. */
    List<Integer> targets(int vector) {
        VcpuThread[][] t = targets;
        if (vector < 0 || vector >= t.length) {
            return List.of();
        }
        return Arrays.stream(t[vector]).map(v -> v.id).toList();
    }

}
