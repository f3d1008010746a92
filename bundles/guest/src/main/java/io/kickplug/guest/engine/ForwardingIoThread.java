package io.kickplug.guest.engine;

import io.kickplug.api.iothread.IoSource;
import io.kickplug.api.iothread.IoThread;
import java.util.Objects;

/**
 * An I/O thread that passes every abstract method of {@link IoThread} to {@code delegate}; a subclass overrides
 * what it changes. The interface's default methods ({@link IoThread#executeAtEndOfIteration}, the descriptor
 * waits) are not forwarded: a subclass that wants the delegate's own forwards them itself.
 */
public class ForwardingIoThread implements IoThread {

    protected final IoThread delegate;

    public ForwardingIoThread(IoThread delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public String name() {
        return delegate.name();
    }

    @Override
    public IoSource register(String name, Runnable handler) {
        return delegate.register(name, handler);
    }

    @Override
    public void execute(Runnable task) {
        delegate.execute(task);
    }

    @Override
    public boolean inLoop() {
        return delegate.inLoop();
    }

    @Override
    public long iterations() {
        return delegate.iterations();
    }

    @Override
    public long cpuTimeNanos() {
        return delegate.cpuTimeNanos();
    }

    @Override
    public void close() {
        delegate.close();
    }
}
