package io.kickplug.guest.transport;

import java.util.Arrays;
import java.util.Objects;

/**
 * How a device's interrupts reach the guest once its queues are set up, as
 * {@link VirtioTransportDriver#findQueues} chose it (Linux's {@code vp_find_vqs}):
 * <ul>
 * <li>{@link Mode#LINE}: one interrupt line (virtio-mmio, or virtio-pci INTx) for every queue and the
 * configuration change; the handler reads the transport's status register to learn the cause;</li>
 * <li>{@link Mode#MSIX_PER_QUEUE}: MSI-X with the configuration change on one vector and each queue on a vector
 * of its own; the vector is the cause, nothing is read;</li>
 * <li>{@link Mode#MSIX_SHARED}: MSI-X with the configuration change on one vector and every queue on one shared
 * vector.</li>
 * </ul>
 * Immutable.
 */
public final class InterruptRouting {

    /** Cause bit: a queue has used buffers (virtio-mmio InterruptStatus bit 0, virtio-pci ISR bit 0). */
    public static final int USED_BUFFER = 1;
    /** Cause bit: the configuration changed (virtio-mmio InterruptStatus bit 1, virtio-pci ISR bit 1). */
    public static final int CONFIG_CHANGE = 2;

    public enum Mode {
        LINE("one interrupt line"),
        MSIX_PER_QUEUE("MSI-X, a vector per queue"),
        MSIX_SHARED("MSI-X, one vector shared by the queues");

        private final String text;

        Mode(String text) {
            this.text = text;
        }

        public String text() {
            return text;
        }
    }

    private final Mode mode;
    private final int configVector;
    private final int[] queueVectors;

    private InterruptRouting(Mode mode, int configVector, int[] queueVectors) {
        this.mode = mode;
        this.configVector = configVector;
        this.queueVectors = queueVectors;
    }

    /** Every queue and the configuration change on line 0; the cause comes from the transport's status. */
    public static InterruptRouting line(int queues) {
        return new InterruptRouting(Mode.LINE, 0, new int[checkQueues(queues)]);
    }

    /**
     * MSI-X with the configuration change on {@code configVector} and queue {@code q} on {@code queueVectors[q]}:
     * {@link Mode#MSIX_PER_QUEUE} when every queue has a vector of its own that is not the configuration
     * vector, {@link Mode#MSIX_SHARED} otherwise.
     */
    public static InterruptRouting msix(int configVector, int[] queueVectors) {
        Objects.requireNonNull(queueVectors, "queueVectors");
        checkQueues(queueVectors.length);
        if (configVector < 0) {
            throw new IllegalArgumentException("configuration vector " + configVector + " is negative");
        }
        int[] vectors = queueVectors.clone();
        boolean distinct = true;
        for (int q = 0; q < vectors.length; q++) {
            if (vectors[q] < 0) {
                throw new IllegalArgumentException("vector " + vectors[q] + " of queue " + q + " is negative");
            }
            distinct &= vectors[q] != configVector;
            for (int p = 0; p < q; p++) {
                distinct &= vectors[p] != vectors[q];
            }
        }
        return new InterruptRouting(distinct ? Mode.MSIX_PER_QUEUE : Mode.MSIX_SHARED, configVector, vectors);
    }

    private static int checkQueues(int queues) {
        if (queues < 1) {
            throw new IllegalArgumentException("at least one queue is needed: " + queues);
        }
        return queues;
    }

    public Mode mode() {
        return mode;
    }

    /** Whether an interrupt's cause must be read from the transport (one line) rather than known from its vector. */
    public boolean readsStatus() {
        return mode == Mode.LINE;
    }

    public int queues() {
        return queueVectors.length;
    }

    /** The vector (or line) of the configuration-change interrupt. */
    public int configVector() {
        return configVector;
    }

    /** The vector (or line) of queue {@code queue}'s used-buffer interrupt. */
    public int queueVector(int queue) {
        return queueVectors[queue];
    }

    /**
     * What an interrupt on {@code vector} says by itself: {@link #USED_BUFFER} and/or {@link #CONFIG_CHANGE}
     * for an MSI-X vector, 0 for a vector nothing is mapped to and for a line (whose cause is read from the
     * transport).
     */
    public int cause(int vector) {
        if (mode == Mode.LINE) {
            return 0;
        }
        int cause = vector == configVector ? CONFIG_CHANGE : 0;
        for (int v : queueVectors) {
            if (v == vector) {
                return cause | USED_BUFFER;
            }
        }
        return cause;
    }

    /** The queues whose used-buffer interrupt is {@code vector}, in order. */
    public int[] queuesOf(int vector) {
        return java.util.stream.IntStream.range(0, queueVectors.length).filter(q -> queueVectors[q] == vector)
                .toArray();
    }

    /** "MSI-X, a vector per queue (config 0, queues 1-4)", "one interrupt line". */
    public String describe() {
        if (mode == Mode.LINE) {
            return mode.text();
        }
        StringBuilder queues = new StringBuilder();
        if (mode == Mode.MSIX_PER_QUEUE && queueVectors.length > 1
                && queueVectors[queueVectors.length - 1] - queueVectors[0] == queueVectors.length - 1) {
            queues.append(queueVectors[0]).append('-').append(queueVectors[queueVectors.length - 1]);
        } else if (mode == Mode.MSIX_SHARED && Arrays.stream(queueVectors).distinct().count() == 1) {
            queues.append(queueVectors[0]);
        } else {
            queues.append(String.join(",", Arrays.stream(queueVectors).mapToObj(String::valueOf).toList()));
        }
        return mode.text() + " (config " + configVector + ", queue" + (queueVectors.length == 1 ? " " : "s ")
                + queues + ")";
    }

    @Override
    public String toString() {
        return describe();
    }
}
