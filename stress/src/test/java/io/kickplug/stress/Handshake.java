package io.kickplug.stress;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.MemoryRegion;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import io.kickplug.virtio.queue.SplitDriverQueue;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * One split ring shared by the real driver view ({@link SplitDriverQueue}) and the real device view
 * ({@link SplitDeviceQueue}), set up just before one side's notification handshake races the other's.
 *
 * <p>Available side (VIRTIO 1.2 section 2.7.10, the device going to sleep): the driver publishes a chain,
 * full fence, reads {@code avail_event} (or {@code used.flags}) in {@link SplitDriverQueue#kickPrepare()};
 * the device publishes {@code avail_event} (or clears NO_NOTIFY), full fence, re-reads {@code avail.idx} in
 * {@link SplitDeviceQueue#enableNotification()}. At least one of them must see the other: a kick, or the
 * device finding the chain itself.
 *
 * <p>Used side (section 2.7.7, the driver going to sleep): the device publishes a used entry, full fence, reads
 * {@code used_event} (or {@code avail.flags}) in {@link SplitDeviceQueue#needsNotification()}; the driver
 * publishes {@code used_event} (or clears NO_INTERRUPT), full fence, re-reads {@code used.idx} in
 * {@link SplitDriverQueue#enableCallbacks()}. At least one of them must see the other: an interrupt, or the
 * driver finding the entry itself.
 *
 * <p>Before the race the ring is in the state where the missing fence matters: the other side's suppression
 * field is stale (it would suppress the notification if read before the racing store).
 */
public final class Handshake {

    static final int SIZE = 4;
    private static final long FEATURES_BASE = VirtioFeatures.VERSION_1;

    final GuestMemory memory;
    final SplitDriverQueue driver;
    final SplitDeviceQueue device;
    private final long buffer;
    private DescriptorChain inFlight;

    private Handshake(boolean eventIdx) {
        long features = FEATURES_BASE | (eventIdx ? VirtioFeatures.RING_EVENT_IDX : 0);
        QueueLayout layout = QueueLayout.contiguous(SIZE, 0);
        // A small region per state: jcstress makes many states.
        ByteBuffer bytes = ByteBuffer.allocateDirect(4096);
        memory = OffHeapGuestMemory.wrap(List.of(new MemoryRegion(0, 4096)), List.of(List.of(bytes)));
        driver = new SplitDriverQueue(memory, layout, features, -1, 0);
        device = new SplitDeviceQueue(memory, 0, layout, features);
        buffer = 2048;
    }

    private void add() {
        if (!driver.add(List.of(BufferSpec.writable(buffer, 16)), false, Boolean.TRUE)) {
            throw new IllegalStateException("ring full");
        }
    }

    /**
     * Available side: one chain went round already (kicked, taken and used), the device then had notifications
     * off while it worked ({@code avail_event} behind the first chain, or NO_NOTIFY set), took the
     * chain, and now goes to sleep while the driver adds the next one.
     */
    public static Handshake availSide(boolean eventIdx) {
        Handshake h = new Handshake(eventIdx);
        h.add();
        h.driver.kickPrepare(); // avail_event 0 asks for this one: a kick
        h.device.disableNotification();
        DescriptorChain c = h.device.pop();
        h.device.pushUsed(c.head(), 0);
        h.device.needsNotification();
        h.driver.getUsed();
        // State now: device nextAvail 1, avail_event 0xffff (EVENT_IDX) or NO_NOTIFY set: a second chain
        // published now would not be kicked unless the device's re-enable is seen.
        return h;
    }

    /** Driver: publish a chain, full fence, read the suppression field. Returns whether it kicks. */
    public boolean driverPublish() {
        add();
        return driver.kickPrepare();
    }

    /** Device: re-enable notifications, full fence, re-read avail.idx. Returns whether it found the chain. */
    public boolean deviceEnable() {
        return device.enableNotification();
    }

    /**
     * Used side: the driver has two chains out, the device has taken both and used the first; the driver took
     * that entry and then had callbacks off (used_event left behind, or NO_INTERRUPT set) while it worked; it
     * now re-enables callbacks while the device uses the second chain.
     */
    public static Handshake usedSide(boolean eventIdx) {
        Handshake h = new Handshake(eventIdx);
        h.add();
        h.add();
        h.driver.kickPrepare();
        DescriptorChain first = h.device.pop();
        h.inFlight = h.device.pop();
        h.device.pushUsed(first.head(), 0);
        h.device.needsNotification(); // the first decision: interrupt
        h.driver.getUsed();
        h.driver.disableCallbacks();
        return h;
    }

    /** Device: publish the used entry, full fence, read the suppression field. Returns whether it interrupts. */
    public boolean devicePush() {
        device.pushUsed(inFlight.head(), 0);
        return device.needsNotification();
    }

    /** Driver: re-enable callbacks, full fence, re-read used.idx. Returns whether it found the entry itself. */
    public boolean driverEnable() {
        return !driver.enableCallbacks();
    }
}
