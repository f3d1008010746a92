package io.kickplug.sdk.testkit;

import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollPolicy;
import io.kickplug.api.poll.PollWindow;
import io.kickplug.guest.engine.MachineConfig;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.function.Supplier;

/**
 * The contract of a {@link PollPolicy}: a new window starts at 0 (no polling until a wait shows it pays), a window
 * stays within 0 and poll-max-ns whatever the waits, poll-max-ns 0 means no polling, and a wait far longer than
 * poll-max-ns ends polling when the parameters say so (shrink 0: reset to 0); the real device polling with it
 * serves fio verify. {@link PollPolicyContractTest} runs it from a plugin's tests.
 */
public final class PollPolicyContract {

    private final Supplier<? extends PollPolicy> policies;

    private PollPolicyContract(Supplier<? extends PollPolicy> policies) {
        this.policies = Objects.requireNonNull(policies);
    }

    public static PollPolicyContract of(Supplier<? extends PollPolicy> policies) {
        return new PollPolicyContract(policies);
    }

    /** Random parameters and waits (0 to 10 times poll-max-ns, and far beyond). */
    public void checkWindow(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        long maxNs = r.nextInt(4) == 0 ? 0 : 1 + r.nextLong(PollParams.LIMIT_MAX_NS / 1000);
        long grow = r.nextBoolean() ? 0 : 2 + r.nextInt(7);
        long shrink = r.nextBoolean() ? 0 : 2 + r.nextInt(7);
        PollParams params = new PollParams(maxNs, grow, shrink);
        PollWindow window = policies.get().newWindow(params);
        ContractViolation.check(window.pollNs() == 0, Rule.POLLING_STOPS, "a new window for " + params + " starts at "
                + window.pollNs() + " ns, not 0");
        for (int i = 0; i < 2000; i++) {
            long blockNs = switch (r.nextInt(4)) {
                case 0 -> r.nextLong(Math.max(1, maxNs + 1));
                case 1 -> r.nextLong(Math.max(1, 10 * maxNs + 1));
                case 2 -> r.nextLong(1_000_000);
                default -> 0;
            };
            window.update(blockNs);
            long poll = window.pollNs();
            ContractViolation.check(poll >= 0 && poll <= maxNs, Rule.WINDOW_IN_BOUNDS, "after a wait of " + blockNs
                    + " ns the window is " + poll + " ns, outside 0.." + maxNs + " (" + params + ")");
        }
        if (maxNs > 0 && shrink == 0) {
            window.update(maxNs * 1000 + 1_000_000_000L);
            ContractViolation.check(window.pollNs() == 0, Rule.POLLING_STOPS, "after a wait far beyond "
                    + "poll-max-ns with shrink 0 the window is " + window.pollNs() + " ns, not 0 (" + params + ")");
        }
    }

    /** The real device polling with the policy (EVENT_IDX on), and the simulated guest's fio write-and-verify. */
    public void checkUnderFio(long seed) {
        try (InProcessDevice device = new InProcessDevice()) {
            device.attachMemory(2, 1);
            device.disks().device(InProcessDevice.DISK).setPollPolicy(policies.get());
            device.disks().setPolling(InProcessDevice.DISK, true, PollParams.defaults());
            SplittableRandom r = new SplittableRandom(seed);
            MachineConfig config = InProcessDevice.machine(2, true);
            for (int pass = 0; pass < StrategyContract.passes(); pass++) {
                List<String> args = List.of("--rw=randwrite", "--bs=4k", "--size=256k", "--ioengine=libaio",
                        "--verify=crc32c", "--randseed=" + r.nextInt(1 << 20), "--name=a", "--offset=0",
                        "--iodepth=" + (1 + r.nextInt(32)));
                InProcessDevice.checkVerified(device.fio(config, args), Rule.EVERY_REQUEST_COMPLETES,
                        "polling pass " + pass + " " + args);
            }
        }
    }
}
