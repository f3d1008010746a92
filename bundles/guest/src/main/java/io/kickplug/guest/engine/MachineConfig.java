package io.kickplug.guest.engine;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.guest.virtio.DriverConfig;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Consumer;

/**
 * How a {@link GuestMachine} is built.
 *
 * @param name names the machine's locks in the lock statistics ({@code "<name> vq<q>"}), usually the disk name
 * @param vcpus vCPU threads, 1 to {@link #MAX_VCPUS}
 * @param exitLatencyNs what one notify (QueueNotify write, a VM exit) costs the notifying vCPU, busy-waited
 * @param injectLatencyNs what one interrupt costs the receiving vCPU, busy-waited
 * @param kickPolicy name of the {@code KickPolicy} service ({@code kick.policy} property): "under-lock",
 *     "outside-lock", ...
 * @param queueDepth tags per hardware queue (requests in flight per queue); 0 for the queue size, as Linux's
 *     virtio_blk (capped at the queue size either way)
 * @param maxQueues most hardware queues to use; Linux uses min(num_queues, nr_cpu_ids), so 0 means vcpus
 * @param maxRequestBytes largest request the block layer builds before splitting (Linux's max_sectors,
 *     {@link #DEFAULT_MAX_REQUEST_BYTES}), a positive multiple of 512
 * @param supportedFeatures features the driver accepts
 * @param timeout bound of every wait of the driver (reset, a run without progress)
 * @param pollQueues Linux's virtio_blk {@code poll_queues}: the last {@code pollQueues} of the queues in use (at
 *     most all but one) have no interrupt (callbacks off for good) and take only high-priority (hipri)
 *     requests, reaped by polling from the submitting vCPU. 0: hipri requests go to the normal queue, which
 *     turns its callbacks off while they are in flight (the toggling mode of seed 003).
 */
public record MachineConfig(String name, int vcpus, long exitLatencyNs, long injectLatencyNs, String kickPolicy,
        int queueDepth, int maxQueues, int maxRequestBytes, long supportedFeatures, Duration timeout,
        int pollQueues) {

    public static final int MAX_VCPUS = 256;

    /**
     * Default exit cost, 5 us: a guest MMIO store that traps to the VMM (KVM exit, ioeventfd or userspace
     * dispatch, re-entry) costs a few microseconds on current x86 hosts and more on the 2014 arm64 hosts of
     * seed 000; 5 us is the middle of that range, large enough that holding a lock across it shows.
     */
    public static final long DEFAULT_EXIT_LATENCY_NS = 5_000;

    /**
     * Default injection cost, 2 us: delivering an interrupt to a running vCPU (kick out of guest mode, inject,
     * re-enter) plus the EOI exit without posted interrupts is on the order of 1-3 us.
     */
    public static final long DEFAULT_INJECT_LATENCY_NS = 2_000;

    public static final String DEFAULT_KICK_POLICY = "outside-lock";

    /** Linux's BLK_DEF_MAX_SECTORS (2560 sectors). */
    public static final int DEFAULT_MAX_REQUEST_BYTES = DriverConfig.DEFAULT_MAX_REQUEST_BYTES;

    public MachineConfig {
        Objects.requireNonNull(name, "name");
        if (vcpus < 1 || vcpus > MAX_VCPUS) {
            throw new IllegalArgumentException("vcpus " + vcpus + " is out of range 1.." + MAX_VCPUS);
        }
        if (exitLatencyNs < 0) {
            throw new IllegalArgumentException("exit latency " + exitLatencyNs + " ns must not be negative");
        }
        if (injectLatencyNs < 0) {
            throw new IllegalArgumentException("injection latency " + injectLatencyNs + " ns must not be negative");
        }
        if (kickPolicy == null || kickPolicy.isBlank()) {
            throw new IllegalArgumentException("kick policy name must not be empty");
        }
        if (queueDepth < 0) {
            throw new IllegalArgumentException("queue depth " + queueDepth + " must not be negative");
        }
        if (maxQueues < 0) {
            throw new IllegalArgumentException("maxQueues " + maxQueues + " must not be negative");
        }
        if (maxRequestBytes <= 0 || maxRequestBytes % VirtioBlk.SECTOR_SIZE != 0) {
            throw new IllegalArgumentException("max request size " + maxRequestBytes
                    + " must be a positive multiple of 512");
        }
        if (timeout == null || timeout.isNegative() || timeout.isZero()) {
            throw new IllegalArgumentException("timeout must be positive: " + timeout);
        }
        if (pollQueues < 0 || pollQueues > MAX_VCPUS) {
            throw new IllegalArgumentException("poll queues " + pollQueues + " is out of range 0.." + MAX_VCPUS);
        }
    }

    /** The form without poll queues. */
    public MachineConfig(String name, int vcpus, long exitLatencyNs, long injectLatencyNs, String kickPolicy,
            int queueDepth, int maxQueues, int maxRequestBytes, long supportedFeatures, Duration timeout) {
        this(name, vcpus, exitLatencyNs, injectLatencyNs, kickPolicy, queueDepth, maxQueues, maxRequestBytes,
                supportedFeatures, timeout, 0);
    }

    /** Defaults: 1 vCPU, default latencies, outside-lock, queue-size depth, all driver features. */
    public static MachineConfig defaults(String name) {
        return new MachineConfig(name, 1, DEFAULT_EXIT_LATENCY_NS, DEFAULT_INJECT_LATENCY_NS, DEFAULT_KICK_POLICY, 0,
                0, DEFAULT_MAX_REQUEST_BYTES, DriverConfig.SUPPORTED_FEATURES, DriverConfig.DEFAULT_TIMEOUT);
    }

    public MachineConfig withName(String n) {
        return with(d -> d.name = n);
    }

    public MachineConfig withVcpus(int n) {
        return with(d -> d.vcpus = n);
    }

    public MachineConfig withLatencies(long exitNs, long injectNs) {
        return with(d -> {
            d.exitLatencyNs = exitNs;
            d.injectLatencyNs = injectNs;
        });
    }

    public MachineConfig withKickPolicy(String policy) {
        return with(d -> d.kickPolicy = policy);
    }

    public MachineConfig withQueueDepth(int depth) {
        return with(d -> d.queueDepth = depth);
    }

    public MachineConfig withMaxQueues(int queues) {
        return with(d -> d.maxQueues = queues);
    }

    public MachineConfig withFeatures(long features) {
        return with(d -> d.supportedFeatures = features);
    }

    public MachineConfig withTimeout(Duration t) {
        return with(d -> d.timeout = t);
    }

    public MachineConfig withPollQueues(int n) {
        return with(d -> d.pollQueues = n);
    }

    /** A copy with the fields {@code edit} changes; the canonical constructor checks the result. */
    private MachineConfig with(Consumer<Draft> edit) {
        Draft d = new Draft(this);
        edit.accept(d);
        return new MachineConfig(d.name, d.vcpus, d.exitLatencyNs, d.injectLatencyNs, d.kickPolicy, d.queueDepth,
                d.maxQueues, d.maxRequestBytes, d.supportedFeatures, d.timeout, d.pollQueues);
    }

    /** The fields of a config being edited by one {@code with...} method. */
    private static final class Draft {
        String name;
        int vcpus;
        long exitLatencyNs;
        long injectLatencyNs;
        String kickPolicy;
        int queueDepth;
        int maxQueues;
        int maxRequestBytes;
        long supportedFeatures;
        Duration timeout;
        int pollQueues;

        Draft(MachineConfig c) {
            name = c.name;
            vcpus = c.vcpus;
            exitLatencyNs = c.exitLatencyNs;
            injectLatencyNs = c.injectLatencyNs;
            kickPolicy = c.kickPolicy;
            queueDepth = c.queueDepth;
            maxQueues = c.maxQueues;
            maxRequestBytes = c.maxRequestBytes;
            supportedFeatures = c.supportedFeatures;
            timeout = c.timeout;
            pollQueues = c.pollQueues;
        }
    }
}
