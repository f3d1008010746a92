package io.kickplug.examples.coalesce;

import io.kickplug.api.notify.CompletionNotifier;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * The strategy: SPDK vhost's interrupt coalescing ({@link CoalescingState}) per queue, with the settings of the
 * queue's disk. All calls on the queue's I/O thread; the only other thread is the timer that sends a held
 * notification when no batch comes to send it, and it only hands that work to the I/O thread.
 */
public class CoalescingNotifier implements CompletionNotifier {

    /** The name {@code kp:notify DISK coalesce} uses. */
    public static final String NAME = "coalesce";

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "kickplug-coalesce-timer");
        t.setDaemon(true);
        return t;
    });
    private final Function<String, CoalesceSettings> settings;
    private final LongSupplier clock;

    /** With every disk at {@code settings}. */
    public CoalescingNotifier(CoalesceSettings settings) {
        this(disk -> settings, System::nanoTime);
    }

    /** With the settings of each disk from {@code settings}. */
    public CoalescingNotifier(Function<String, CoalesceSettings> settings, LongSupplier clock) {
        this.settings = settings;
        this.clock = clock;
    }

    private static CoalescingState state(Queue queue) {
        if (queue.attachment() instanceof CoalescingState s) {
            return s;
        }
        CoalescingState s = new CoalescingState();
        queue.attach(s);
        return s;
    }

    @Override
    public void usedBufferPushed(Queue queue) {
        state(queue).completed();
    }

    @Override
    public void end(Queue queue) {
        decide(queue, state(queue));
    }

    private void decide(Queue queue, CoalescingState s) {
        if (queue.pendingUsed() == 0) {
            return;
        }
        long now = clock.getAsLong();
        long at = s.decide(now, settings.apply(queue.device()));
        if (at == CoalescingState.NOW) {
            queue.notifyIfNeeded();
        } else if (!s.timerArmed) {
            s.timerArmed = true;
            try {
                timer.schedule(() -> queue.ioThread().execute(() -> fire(queue, s)), Math.max(0, at - now),
                        TimeUnit.NANOSECONDS);
            } catch (RuntimeException stopped) {
                // the timer is shut down (the bundle stops): decide now rather than never
                s.timerArmed = false;
                queue.notifyIfNeeded();
            }
        }
    }

    /** The timer's turn, on the I/O thread. */
    private void fire(Queue queue, CoalescingState s) {
        s.timerArmed = false;
        // After a detach the queue belongs to another strategy (its attachment was cleared), which decides.
        if (queue.attachment() == s) {
            decide(queue, s);
        }
    }

    /** Whatever is held is decided and sent now; a timer still armed finds the queue gone. */
    @Override
    public void detach(Queue queue) {
        queue.attach(null);
        queue.notifyIfNeeded();
    }

    /** Stops the timer (the component deactivates after the device detached the strategy from its queues). */
    public void close() {
        timer.shutdownNow();
    }

    @Override
    public String toString() {
        return NAME;
    }
}
