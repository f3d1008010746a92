package io.kickplug.guest.testing;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.PciFunction;
import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.transport.TransportKind;
import java.util.Objects;

/** A port that passes everything to {@code delegate}; a test's port overrides what it watches or changes. */
public class ForwardingGuestPort implements GuestPort {

    protected final GuestPort delegate;

    public ForwardingGuestPort(GuestPort delegate) {
        this.delegate = Objects.requireNonNull(delegate, "delegate");
    }

    @Override
    public TransportKind kind() {
        return delegate.kind();
    }

    @Override
    public GuestMemory memory() {
        return delegate.memory();
    }

    @Override
    public RegisterWindow mmio() {
        return delegate.mmio();
    }

    @Override
    public PciFunction pci() {
        return delegate.pci();
    }

    @Override
    public void connectInterrupts(GuestInterrupts interrupts) {
        delegate.connectInterrupts(interrupts);
    }
}
