package io.kickplug.batching;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import java.util.ArrayDeque;

/** An I/O thread the test turns by hand: {@link #endIteration()} runs the end-of-iteration tasks. */
final class ManualLoop implements IoThread {

    private final ArrayDeque<Runnable> endOfIteration = new ArrayDeque<>();
    private long iterations = 1;

    @Override
    public void executeAtEndOfIteration(Runnable task) {
        endOfIteration.add(task);
    }

    /** Runs the end-of-iteration tasks queued so far, then starts the next iteration. */
    void endIteration() {
        for (int n = endOfIteration.size(); n > 0; n--) {
            endOfIteration.poll().run();
        }
        iterations++;
    }

    int scheduled() {
        return endOfIteration.size();
    }

    @Override
    public String name() {
        return "manual";
    }

    @Override
    public IoSource register(String name, Runnable handler) {
        throw new UnsupportedOperationException();
    }

    @Override
    public void execute(Runnable task) {
        throw new UnsupportedOperationException();
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
