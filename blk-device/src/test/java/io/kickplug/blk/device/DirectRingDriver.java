package io.kickplug.blk.device;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.virtio.memory.OffHeapGuestMemory;
import io.kickplug.virtio.queue.SplitDeviceQueue;
import io.kickplug.virtio.testkit.Descriptors;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A driver side written straight into the split ring (VIRTIO 1.2 section 2.7), for tests that count what the
 * device does per request: it allocates nothing per request itself on the device's threads. Request slot
 * {@code h} is the chain whose head is descriptor {@code 3h} (16-byte header, readable), then {@code 3h + 1}
 * (data) and {@code 3h + 2} (1-byte status, writable); so {@code 3 * slots <= size}. The data buffer of each
 * publication is chosen by the caller.
 * One driver thread only.
 */
final class DirectRingDriver {

    static final long FEATURES = VirtioFeatures.VERSION_1 | VirtioFeatures.RING_EVENT_IDX | VirtioBlk.F_FLUSH;

    final GuestMemory memory;
    final QueueLayout layout;
    final int size;
    private final long headers;
    private final long statuses;
    /** First byte of the data area; {@link #dataBytes} long. */
    final long data;
    final long dataBytes;
    private int availIdx;
    private int usedSeen;
    final Signals signals = new Signals();

    /** The transport side: counts notifications, latches a fault. */
    static final class Signals implements DeviceSignals {
        final AtomicLong interrupts = new AtomicLong();
        final AtomicReference<GuestFaultException> fault = new AtomicReference<>();

        @Override
        public void usedBuffer(int queueIndex) {
            interrupts.incrementAndGet();
        }

        @Override
        public void configChanged() {
        }

        @Override
        public void deviceError(GuestFaultException f) {
            fault.compareAndSet(null, f);
        }

        @Override
        public boolean needsReset() {
            return fault.get() != null;
        }
    }

    /**
     * A test's tear-down: resets and closes the device, then closes its I/O thread; either may be null (the test
     * failed before it made them).
     */
    static void stop(VirtioBlkDevice device, IoThread ioThread) {
        if (device != null) {
            device.reset();
            device.close();
        }
        if (ioThread != null) {
            ioThread.close();
        }
    }

    DirectRingDriver(int size, long dataBytes) {
        this.size = size;
        this.dataBytes = dataBytes;
        long rings = (QueueLayout.contiguousBytes(size) + 4095) & ~4095L;
        this.headers = rings;
        this.statuses = headers + 16L * size;
        this.data = (statuses + size + 4095) & ~4095L;
        this.memory = OffHeapGuestMemory.allocate(data + dataBytes);
        this.layout = QueueLayout.contiguous(size, 0);
    }

    /** Activates {@code device} on one queue over this ring. */
    void activate(VirtioBlkDevice device) {
        SplitDeviceQueue queue = new SplitDeviceQueue(memory, 0, layout, FEATURES);
        device.acceptsFeatures(FEATURES);
        device.activate(new DeviceActivation(FEATURES, memory, List.of(queue), signals));
    }

    /** Writes head {@code head}'s chain: a request of {@code type} at {@code sector} with data at {@code buffer}. */
    void prepare(int head, int type, long sector, long buffer, int length) {
        long header = headers + 16L * head;
        memory.writeU32(header, type);
        memory.writeU32(header + 4, 0);
        memory.writeU64(header + 8, sector);
        memory.writeU8(statuses + head, (byte) 0xff); // not a status the device may write
        boolean in = type == VirtioBlk.T_IN;
        desc(3 * head, header, 16, 1, 3 * head + 1); // NEXT
        desc(3 * head + 1, buffer, length, 1 | (in ? 2 : 0), 3 * head + 2); // NEXT (| WRITE for IN)
        desc(3 * head + 2, statuses + head, 1, 2, 0); // WRITE
    }

    private void desc(int index, long addr, int len, int flags, int next) {
        Descriptors.writeSplit(memory, layout.descTable(), index, addr, len, flags, next);
    }

    /** Puts {@code head} in the next available slot; {@link #publish} makes it visible. */
    void add(int head) {
        memory.writeU16(layout.availRing() + 4 + 2L * (availIdx & (size - 1)), (short) (3 * head));
        availIdx = (availIdx + 1) & 0xffff;
    }

    /** Publishes avail.idx once for everything added (release: entries before the index, 2.7.13.3). */
    void publish() {
        memory.writeU16Release(layout.availRing() + 2, (short) availIdx);
    }

    /** Used entries the driver has not consumed yet (acquire: the entries are read after the index). */
    int usedPending() {
        int used = memory.readU16Acquire(layout.usedRing() + 2) & 0xffff;
        return (used - usedSeen) & 0xffff;
    }

    /** Consumes the next used entry: returns its request slot; {@link #lastUsedLen} its length. */
    int takeUsed() {
        long elem = layout.usedRing() + 4 + 8L * (usedSeen & (size - 1));
        int id = memory.readU32(elem);
        if (id % 3 != 0) {
            throw new AssertionError("used id " + id + " is not the head of a chain");
        }
        int head = id / 3;
        lastUsedLen = memory.readU32(elem + 4);
        usedSeen = (usedSeen + 1) & 0xffff;
        // EVENT_IDX: ask for an interrupt at the next used entry, as a Linux driver with callbacks on does.
        memory.writeU16(layout.availRing() + 4 + 2L * size, (short) usedSeen);
        return head;
    }

    int lastUsedLen;

    int status(int head) {
        return memory.readU8(statuses + head) & 0xff;
    }

    /** Sets head {@code head}'s status byte to a value the device never writes, to see the next write. */
    void clearStatus(int head) {
        memory.writeU8(statuses + head, (byte) 0xff);
    }

    /** Waits (spinning, then yielding) until {@code n} used entries are pending; fails after 20 s. */
    void awaitUsed(int n) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        int spins = 0;
        while (usedPending() < n) {
            if (signals.fault.get() != null) {
                throw new AssertionError("device error", signals.fault.get());
            }
            if (System.nanoTime() - deadline > 0) {
                throw new AssertionError("only " + usedPending() + " of " + n + " requests used after 20 s");
            }
            if (++spins > 100) {
                Thread.yield();
            } else {
                Thread.onSpinWait();
            }
        }
    }
}
