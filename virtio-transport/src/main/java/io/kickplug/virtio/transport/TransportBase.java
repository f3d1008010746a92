package io.kickplug.virtio.transport;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtqueueFactory;

/**
 * What virtio-mmio and virtio-pci share: the {@link VirtioFunction} the registers decode onto, the link to the
 * guest's interrupt controller, and the {@link TransportInstance}/{@link GuestPort} side (a transport is its
 * own port; exactly one of {@link #mmio()} and {@link #pci()} is non-null: the subclass overrides its own).
 */
abstract class TransportBase implements TransportInstance, GuestPort, InterruptSink, VirtioFunction.Resettable {

    protected final VirtioFunction function;
    protected final GuestLink guest = new GuestLink();
    private final TransportKind kind;

    TransportBase(TransportKind kind, VirtioDevice device, GuestMemory memory, VirtqueueFactory rings) {
        this.kind = kind;
        this.function = new VirtioFunction(device, memory, rings);
    }

    public final VirtioFunction function() {
        return function;
    }

    @Override
    public final TransportKind kind() {
        return kind;
    }

    @Override
    public final GuestPort port() {
        return this;
    }

    @Override
    public final int deviceStatus() {
        return function.status();
    }

    @Override
    public final GuestMemory memory() {
        return function.memory();
    }

    @Override
    public final void connectInterrupts(GuestInterrupts interrupts) {
        guest.connect(interrupts);
    }

    @Override
    public final void close() {
        function.reset();
        // After the reset: every request the device completed is in the used rings (hot-unplug). A guest that
        // connects later (it found this port just before the close) is told when it connects.
        guest.close();
    }
}
