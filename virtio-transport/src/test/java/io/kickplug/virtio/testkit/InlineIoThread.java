package io.kickplug.virtio.testkit;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import java.util.ArrayDeque;

/**
 * An {@link IoThread} whose loop is the caller: a signal runs the source's handler at once, on the signalling
 * thread, and tasks run inline. Benchmarks use it to measure one drain on the benchmark thread with no thread
 * hand-off in the figure; tests of end-of-iteration work turn its iterations by hand ({@link #manual()}: such
 * tasks wait for {@link #endIteration()}). Not for concurrent use.
 */
public final class InlineIoThread implements IoThread {

    private final String name;
    /** Null when end-of-iteration tasks run inline. */
    private final ArrayDeque<Runnable> endOfIteration;
    private long iterations;

    /** End-of-iteration tasks run inline, like any task. */
    public InlineIoThread() {
        this("inline", null);
    }

    private InlineIoThread(String name, ArrayDeque<Runnable> endOfIteration) {
        this.name = name;
        this.endOfIteration = endOfIteration;
    }

    /** End-of-iteration tasks wait for {@link #endIteration()}; the first iteration is number 1. */
    public static InlineIoThread manual() {
        InlineIoThread loop = new InlineIoThread("manual", new ArrayDeque<>());
        loop.iterations = 1;
        return loop;
    }

    /** Runs the end-of-iteration tasks queued so far, then starts the next iteration. */
    public void endIteration() {
        if (endOfIteration != null) {
            for (int n = endOfIteration.size(); n > 0; n--) {
                endOfIteration.poll().run();
            }
        }
        iterations++;
    }

    /** End-of-iteration tasks waiting for {@link #endIteration()}. */
    public int scheduled() {
        return endOfIteration == null ? 0 : endOfIteration.size();
    }

    @Override
    public String name() {
        return name;
    }

    @Override
    public IoSource register(String source, Runnable handler) {
        return new IoSource() {
            private boolean cancelled;

            @Override
            public void signal() {
                if (!cancelled) {
                    iterations++;
                    handler.run();
                }
            }

            @Override
            public void cancel() {
                cancelled = true;
            }
        };
    }

    @Override
    public void execute(Runnable task) {
        task.run();
    }

    @Override
    public void executeAtEndOfIteration(Runnable task) {
        if (endOfIteration == null) {
            task.run();
        } else {
            endOfIteration.add(task);
        }
    }

    @Override
    public boolean inLoop() {
        return true;
    }

    @Override
    public long iterations() {
        return iterations;
    }

    @Override
    public long cpuTimeNanos() {
        return -1;
    }

    @Override
    public void close() {
    }
}
