package io.kickplug.sdk.testkit;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.notify.CompletionNotifier;
import io.kickplug.api.notify.QueueCounters;
import io.kickplug.guest.engine.MachineConfig;
import io.kickplug.guest.fio.FioReport;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.Combinators;

/**
 * The contract of a completion-notification strategy ({@link CompletionNotifier}), checked three ways:
 * <ul>
 * <li>{@link #checkProtocol(Script)}: one script of batches of random shapes on two queues of one real I/O thread,
 * the driver's wishes changing between batches (EVENT_IDX's used_event, or the NO_INTERRUPT flag), the strategy
 * detached at any point; no used buffer stays without a decision and no owed notification unsent
 * ({@link Rule#NO_LOST_NOTIFICATION}), no call after detach ({@link Rule#NO_CALL_AFTER_DETACH}), none off the I/O
 * thread ({@link Rule#QUEUE_ON_IO_THREAD});</li>
 * <li>{@link #checkUnderFio(boolean, long)}: the real device and the simulated guest's fio write-and-verify at
 * random depths, EVENT_IDX on or off ({@link Rule#EVERY_REQUEST_COMPLETES}: a lost interrupt times a request
 * out);</li>
 * <li>{@link #checkSwapUnderFio(long)}: the queues swapped to and from the strategy, and its service removed and
 * re-added, while fio verify runs.</li>
 * </ul>
 * {@link StrategyContractTest} runs all three from a plugin's tests.
 */
public final class StrategyContract {

    private final String name;
    private final Supplier<? extends CompletionNotifier> strategies;
    private Duration maxDelay = Duration.ZERO;
    /** The service object the protocol checks share, as every queue of a running Kickplug shares one. */
    private CompletionNotifier shared;

    private StrategyContract(String name, Supplier<? extends CompletionNotifier> strategies) {
        this.name = CompletionNotifierNames.check(name);
        this.strategies = Objects.requireNonNull(strategies);
    }

    /** The contract of the strategy registered as {@code name}; {@code strategies} makes a fresh service object. */
    public static StrategyContract of(String name, Supplier<? extends CompletionNotifier> strategies) {
        return new StrategyContract(name, strategies);
    }

    /**
     * A strategy that sends a notification later than the end of its I/O thread's busy time (a timer, as interrupt
     * coalescing does) declares how much later at most: the owed notification must be sent within that. Zero
     * (the default): by the time the I/O thread is idle.
     */
    public StrategyContract maxDelay(Duration delay) {
        this.maxDelay = Objects.requireNonNull(delay);
        return this;
    }

    public String name() {
        return name;
    }

    // ---------------------------------------------------------------------------------------------------------
    // The protocol on a real I/O thread.

    /**
     * One batch step: {@code first} and {@code second} used buffers on queues 0 and 1 (0: the queue has no batch
     * in this step), the driver's wish for each ({@code driver}: a seed), and whether the I/O thread then goes idle
     * (the invariant is checked there).
     */
    public record Step(int first, int second, int driver, boolean idle) {
    }

    /**
     * Steps, with the strategy detached from both queues before step {@code detachAt} (none when it is past the
     * end; the strategy is detached at the end then), EVENT_IDX on or off.
     */
    public record Script(List<Step> steps, int detachAt, boolean eventIdx) {
        public Script {
            steps = List.copyOf(steps);
        }
    }

    /** Scripts of 1 to 60 steps, batches of 0 to 40 used buffers, detached anywhere. */
    public static Arbitrary<Script> scripts() {
        Arbitrary<Step> step = Combinators.combine(Arbitraries.integers().between(0, 40).edgeCases(e -> e.includeOnly(0, 1)),
                Arbitraries.integers().between(0, 40), Arbitraries.integers(), Arbitraries.of(true, false, false))
                .as(Step::new);
        Arbitrary<List<Step>> steps = step.list().ofMinSize(1).ofMaxSize(60);
        return Combinators.combine(steps, Arbitraries.integers().between(0, 80), Arbitraries.of(true, false))
                .as(Script::new);
    }

    /** A script drawn from {@code seed}, for tests outside jqwik. */
    public static Script script(long seed) {
        SplittableRandom r = new SplittableRandom(seed);
        List<Step> steps = new ArrayList<>();
        for (int i = 1 + r.nextInt(60); i > 0; i--) {
            steps.add(new Step(r.nextInt(41), r.nextInt(3) == 0 ? 0 : r.nextInt(41), r.nextInt(),
                    r.nextInt(3) == 0));
        }
        return new Script(steps, r.nextInt(81), r.nextBoolean());
    }

    /**
     * Runs {@code script} on a real I/O thread against this contract's strategy object: one object for every
     * script, as a running Kickplug has one service object for every queue of every disk, attached and detached
     * again and again (state a strategy keeps outside its queues' attachments carries over from script to script).
     */
    public void checkProtocol(Script script) {
        CompletionNotifier strategy;
        synchronized (this) {
            if (shared == null) {
                shared = strategies.get();
            }
            strategy = shared;
        }
        try (IoThread thread = new IoThreadFactoryComponent().start("kit-" + name)) {
            RecordingQueue[] queues = {new RecordingQueue("kit", 0, thread), new RecordingQueue("kit", 1, thread)};
            boolean detached = false;
            List<Step> steps = script.steps();
            for (int i = 0; i <= steps.size(); i++) {
                if (!detached && (i == script.detachAt() || i == steps.size())) {
                    onThread(thread, () -> {
                        for (RecordingQueue q : queues) {
                            strategy.detach(q);
                            q.detached();
                        }
                    });
                    // detach makes every decision still owed now and sends what is owed (CompletionNotifier.detach)
                    checkSettled(queues, "right after detach (step " + i + ")");
                    detached = true;
                }
                if (i == steps.size()) {
                    break;
                }
                Step step = steps.get(i);
                boolean now = detached;
                onThread(thread, () -> batch(strategy, queues, step, script.eventIdx(), now));
                if (step.idle()) {
                    awaitSettled(thread, queues, "with the I/O thread idle after step " + i + " of " + script);
                }
                checkCalls(queues);
            }
            awaitSettled(thread, queues, "at the end of " + script);
            // A strategy's timer may still fire after detach: give it its declared delay to show itself.
            if (!maxDelay.isZero()) {
                long until = System.nanoTime() + maxDelay.toNanos() * 2;
                while (System.nanoTime() < until && queues[0].violation() == null && queues[1].violation() == null) {
                    onThread(thread, () -> { });
                    LockSupport.parkNanos(100_000);
                }
            }
            checkCalls(queues);
        }
    }

    /** What the device does for one step: the driver's wishes, then begin, pushes and end per queue. */
    private static void batch(CompletionNotifier strategy, RecordingQueue[] queues, Step step, boolean eventIdx,
            boolean detached) {
        SplittableRandom driver = new SplittableRandom(step.driver());
        int[] sizes = {step.first(), step.second()};
        for (int q = 0; q < 2; q++) {
            RecordingQueue queue = queues[q];
            if (eventIdx) {
                // used_event anywhere near the used index: behind it (no notification wanted until the index wraps),
                // at it, or ahead within the batch
                queue.usedEvent(queue.usedIdx() + driver.nextInt(-4, 48));
            } else {
                queue.usedEvent(null);
                queue.suppress(driver.nextInt(4) == 0);
            }
        }
        if (detached) {
            // Another strategy (immediate) serves the queues now: the device decides itself.
            for (int q = 0; q < 2; q++) {
                RecordingQueue queue = queues[q];
                for (int i = 0; i < sizes[q]; i++) {
                    queue.asDevice(() -> {
                        queue.push(new CompletionNotifier() {
                            @Override
                            public void end(Queue ignored) {
                            }
                        });
                        queue.notifyIfNeeded();
                    });
                }
            }
            return;
        }
        // All begins of the thread's batch come before its ends (CompletionNotifier); pushes interleave.
        for (int q = 0; q < 2; q++) {
            if (sizes[q] > 0) {
                strategy.begin(queues[q]);
            }
        }
        for (int i = 0; i < Math.max(sizes[0], sizes[1]); i++) {
            for (int q = 0; q < 2; q++) {
                if (i < sizes[q]) {
                    queues[q].push(strategy);
                }
            }
        }
        for (int q = 0; q < 2; q++) {
            if (sizes[q] > 0) {
                strategy.end(queues[q]);
            }
        }
    }

    private static void checkCalls(RecordingQueue[] queues) {
        for (RecordingQueue q : queues) {
            if (q.violation() != null) {
                throw q.violation();
            }
        }
    }

    private static void checkSettled(RecordingQueue[] queues, String when) {
        checkCalls(queues);
        for (RecordingQueue q : queues) {
            ContractViolation.check(q.pendingUsed() == 0, Rule.NO_LOST_NOTIFICATION, "queue " + q.index() + ": "
                    + q.pendingUsed() + " used buffer(s) pushed without a decision " + when);
            ContractViolation.check(!q.owed(), Rule.NO_LOST_NOTIFICATION, "queue " + q.index()
                    + ": a notification owed was not sent " + when);
        }
    }

    /** Waits (up to the declared delay plus 5 s, for a loaded machine) until the queues are settled, checked on the I/O thread. */
    private void awaitSettled(IoThread thread, RecordingQueue[] queues, String when) {
        long deadline = System.nanoTime() + maxDelay.toNanos() + TimeUnit.SECONDS.toNanos(5);
        while (true) {
            boolean[] settled = new boolean[1];
            onThread(thread, () -> settled[0] = queues[0].pendingUsed() == 0 && !queues[0].owed()
                    && queues[1].pendingUsed() == 0 && !queues[1].owed());
            checkCalls(queues);
            if (settled[0]) {
                return;
            }
            if (System.nanoTime() > deadline) {
                checkSettled(queues, when + (maxDelay.isZero() ? "" : " (and " + maxDelay.toMillis()
                        + " ms later, the declared delay)"));
                return;
            }
            LockSupport.parkNanos(200_000);
        }
    }

    private static void onThread(IoThread thread, Runnable task) {
        CompletableFuture<Void> done = new CompletableFuture<>();
        thread.execute(() -> {
            try {
                task.run();
                done.complete(null);
            } catch (Throwable t) {
                done.completeExceptionally(t);
            }
        });
        try {
            done.get(30, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            if (e.getCause() instanceof Error err) {
                throw err;
            }
            throw new AssertionError("the strategy threw on the I/O thread", e.getCause());
        } catch (TimeoutException e) {
            throw new AssertionError("the I/O thread did not run a task in 30 s (blocked by the strategy?)");
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }

    // ---------------------------------------------------------------------------------------------------------
    // The real device and the simulated guest.

    private static final String[] BLOCK_SIZES = {"512", "4k", "16k"};

    /** Passes per fio check: {@code -Dkickplug.testkit.passes} (default 4). */
    static int passes() {
        return Integer.getInteger("kickplug.testkit.passes", 4);
    }

    /**
     * fio write-and-verify passes at random depths (1 to 32: the device both batches and goes idle after every
     * request) and block sizes, with random VM-exit and interrupt costs, on 2 queues of one I/O thread, the queues
     * using this strategy; every request completes and verifies ({@link Rule#EVERY_REQUEST_COMPLETES}).
     */
    public void checkUnderFio(boolean eventIdx, long seed) {
        try (InProcessDevice device = new InProcessDevice()) {
            device.addStrategy(name, strategies.get());
            device.attachMemory(2, 1);
            device.disks().setStrategy(InProcessDevice.DISK, name, -1);
            SplittableRandom random = new SplittableRandom(seed);
            MachineConfig base = InProcessDevice.machine(2, eventIdx);
            for (int pass = 0; pass < passes(); pass++) {
                // virtio-mmio has one interrupt line that every vCPU checks all queues on, so a busy queue hides a
                // lost notification of another: every other pass runs one job alone.
                List<String> args = pass % 2 == 1 ? List.of("--rw=randwrite", "--bs=4k", "--size=128k",
                        "--ioengine=libaio", "--verify=crc32c", "--name=lone", "--offset=0",
                        "--iodepth=" + (random.nextBoolean() ? 1 : 1 + random.nextInt(32))) : List.of("--rw=randwrite", "--bs=" + BLOCK_SIZES[random.nextInt(3)],
                        "--size=256k", "--ioengine=libaio", "--verify=crc32c", "--randseed=" + random.nextInt(1 << 20),
                        "--name=a", "--offset=0", "--iodepth=" + (1 + random.nextInt(32)),
                        "--name=b", "--offset=4m", "--iodepth=" + (random.nextInt(3) == 0 ? 1 : 1 + random.nextInt(32)));
                MachineConfig config = base.withLatencies(random.nextInt(4) == 0 ? 0 : random.nextInt(30_000),
                        random.nextInt(4) == 0 ? 0 : random.nextInt(30_000));
                String what = name + " event_idx=" + eventIdx + " pass " + pass + " " + args;
                FioReport report;
                try {
                    report = device.fio(config, args);
                } catch (RuntimeException e) {
                    throw new ContractViolation(Rule.EVERY_REQUEST_COMPLETES, what + ": " + e.getMessage());
                }
                InProcessDevice.checkVerified(report, Rule.EVERY_REQUEST_COMPLETES, what);
            }
            for (QueueCounters c : device.disks().counters(InProcessDevice.DISK)) {
                ContractViolation.check(c.inFlight() == 0, Rule.EVERY_REQUEST_COMPLETES, "queue " + c.queue()
                        + " still has " + c.inFlight() + " requests in flight");
                ContractViolation.check(name.equals(c.strategy()), Rule.EVERY_REQUEST_COMPLETES, "queue "
                        + c.queue() + " uses " + c.strategy() + ", not " + name);
            }
        }
    }

    /**
     * fio verify on 4 queues of 2 I/O threads while the queues swap between immediate and this strategy (one queue
     * or all), and the strategy's service is removed (the queues fall back to immediate) and a new one registered:
     * every request completes, verifies, and waits less than 5 s (a lost interrupt waits for the 10 s timeout).
     */
    public void checkSwapUnderFio(long seed) {
        try (InProcessDevice device = new InProcessDevice()) {
            CompletionNotifier[] current = {strategies.get()};
            device.addStrategy(name, current[0]);
            device.attachMemory(4, 2);
            AtomicBoolean swapping = new AtomicBoolean(true);
            List<FioReport> reports = new CopyOnWriteArrayList<>();
            List<String> mixed = List.of("--rw=randwrite", "--bs=4k", "--size=512k", "--ioengine=libaio",
                    "--verify=crc32c", "--name=a", "--offset=0", "--iodepth=16", "--name=b", "--offset=2m",
                    "--iodepth=1", "--name=c", "--offset=4m", "--iodepth=8");
            List<String> lone = List.of("--rw=randwrite", "--bs=4k", "--size=256k", "--ioengine=libaio",
                    "--verify=crc32c", "--name=a", "--offset=0", "--iodepth=1");
            CompletableFuture<Void> workload = CompletableFuture.runAsync(() -> {
                MachineConfig config = InProcessDevice.machine(4, true).withLatencies(0, 0);
                int pass = 0;
                do {
                    reports.add(device.fio(config, pass++ % 2 == 0 ? mixed : lone));
                } while (swapping.get());
            });
            SplittableRandom random = new SplittableRandom(seed);
            int swaps = Integer.getInteger("kickplug.testkit.swaps", 48);
            for (int swap = 0; (swap < swaps || reports.size() < 4) && !workload.isDone(); swap++) {
                String to = swap % 2 == 0 ? name : CompletionNotifier.IMMEDIATE;
                device.disks().setStrategy(InProcessDevice.DISK, to, random.nextInt(5) - 1);
                if (swap % 8 == 7) {
                    // The plugin's bundle stopped and started again: its service object goes and a new one comes.
                    device.removeStrategy(current[0]);
                    current[0] = strategies.get();
                    device.addStrategy(name, current[0]);
                }
            }
            swapping.set(false);
            try {
                workload.get(3, TimeUnit.MINUTES);
            } catch (Exception e) {
                throw new ContractViolation(Rule.EVERY_REQUEST_COMPLETES, "the fio workload under swaps ended with "
                        + e);
            }
            for (FioReport report : reports) {
                InProcessDevice.checkVerified(report, Rule.EVERY_REQUEST_COMPLETES, "swaps to and from " + name);
                report.jobs().forEach(job -> {
                    long worst = Math.max(job.write().lat().max(), job.read().lat().max());
                    ContractViolation.check(worst < Duration.ofSeconds(5).toNanos(), Rule.EVERY_REQUEST_COMPLETES,
                            "swaps to and from " + name + ": job " + job.name() + " waited " + worst / 1_000_000
                            + " ms for a request (a lost notification waits for the driver's timeout)");
                });
            }
            for (QueueCounters c : device.disks().counters(InProcessDevice.DISK)) {
                ContractViolation.check(c.inFlight() == 0, Rule.EVERY_REQUEST_COMPLETES, "queue " + c.queue()
                        + " still has " + c.inFlight() + " requests in flight after the swaps");
            }
        }
    }
}
