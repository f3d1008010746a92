package io.kickplug.benchmarks;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;

/**
 * An {@link IoThread} whose loop is the caller: a signal runs the source's handler at once, on the
 * signalling thread, and tasks run inline. For benchmarks that measure one drain on the benchmark thread,
 * with no thread hand-off in the figure. Not for concurrent use.
 */
final class InlineIoThread implements IoThread {

    private long iterations;

    @Override
    public String name() {
        return "inline";
    }

    @Override
    public IoSource register(String name, Runnable handler) {
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
