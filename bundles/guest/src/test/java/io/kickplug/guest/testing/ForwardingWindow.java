package io.kickplug.guest.testing;

import io.kickplug.api.transport.RegisterWindow;
import java.util.Objects;

/** A register window that passes every access to {@code real}; a test's window overrides what it changes. */
public class ForwardingWindow implements RegisterWindow {

    protected final RegisterWindow real;

    public ForwardingWindow(RegisterWindow real) {
        this.real = Objects.requireNonNull(real, "real");
    }

    @Override
    public long size() {
        return real.size();
    }

    @Override
    public long read(long offset, int width) {
        return real.read(offset, width);
    }

    @Override
    public void write(long offset, int width, long value) {
        real.write(offset, width, value);
    }
}
