package io.kickplug.virtio.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.TransportInstance;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.testkit.EchoDevice;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * The removal notice of a closed transport ({@link GuestInterrupts#deviceRemoved}, hot-swap): exactly one per
 * connected guest, also for a guest that connects while or after the transport closes (it found the port
 * just before a bundle update closed it). A guest that connected and was never told would drive a device
 * that is gone and wait for completions that never come.
 */
class RemovalNoticeTest {
    enum Kind { MMIO, PCI }

    private final OffHeapGuestMemory mem = OffHeapGuestMemory.allocate(1 << 20);
    private final EchoDevice device = new EchoDevice(2, VirtioFeatures.RING_EVENT_IDX);

    @AfterEach
    void tearDown() {
        device.close();
    }

    private TransportInstance open(Kind kind) {
        return switch (kind) {
            case MMIO -> new MmioTransport(device, mem, new VirtqueueFactoryComponent());
            case PCI -> new PciTransport(device, mem, new VirtqueueFactoryComponent());
        };
    }

    /** Counts notices. */
    private static final class Guest implements GuestInterrupts {
        final AtomicInteger removed = new AtomicInteger();

        @Override
        public void raise(int vector) {
        }

        @Override
        public void deviceRemoved() {
            removed.incrementAndGet();
        }
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aGuestConnectedBeforeTheCloseIsToldOnce(Kind kind) {
        TransportInstance t = open(kind);
        Guest g = new Guest();
        t.port().connectInterrupts(g);
        t.close();
        t.close();
        assertEquals(1, g.removed.get());
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aGuestConnectingAfterTheCloseIsToldAtOnce(Kind kind) {
        TransportInstance t = open(kind);
        GuestPort port = t.port();
        t.close();
        Guest late = new Guest();
        port.connectInterrupts(late);
        assertEquals(1, late.removed.get(), "a guest re-probing a port closed under it learns it is gone");
        port.connectInterrupts(null);
        assertEquals(1, late.removed.get());
    }

    @ParameterizedTest
    @EnumSource(Kind.class)
    void aConnectRacingTheCloseIsToldExactlyOnce(Kind kind) throws Exception {
        for (int i = 0; i < 500; i++) {
            TransportInstance t = open(kind);
            Guest g = new Guest();
            CyclicBarrier start = new CyclicBarrier(2);
            Thread closer = new Thread(() -> {
                await(start);
                t.close();
            });
            closer.start();
            await(start);
            t.port().connectInterrupts(g);
            closer.join();
            assertEquals(1, g.removed.get(), "round " + i);
        }
    }

    private static void await(CyclicBarrier b) {
        try {
            b.await();
        } catch (Exception e) {
            throw new IllegalStateException(e);
        }
    }
}
