package io.kickplug.guest.virtio;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.BufferSpec;
import java.util.ArrayList;
import java.util.List;

/**
 * One request slot of a {@link RequestQueue} (blk-mq's tag): the request's header and status byte in guest
 * memory, reused, and the chain of the request it carries (VIRTIO 1.2 section 5.2.6). A slot is taken from
 * its queue's free list, {@linkplain #prepare prepared} by its owner, added under the queue's lock, collected
 * from the used ring under the lock and {@linkplain RequestQueue#release released}.
 */
public final class RequestSlot {
    /** {@link #result()} before the device answered. */
    public static final int PENDING = -1;
    /** {@link #result()} of a request the driver gave up without a device answer (reset, DEVICE_NEEDS_RESET). */
    public static final int DRIVER_FAILED = -2;
    private static final byte STATUS_UNWRITTEN = (byte) 0xFF;

    final RequestQueue queue;
    final int tag;
    final long header;
    final long status;
    List<BufferSpec> chain;
    /** Added to the ring and not yet taken back from the used ring. */
    boolean inDevice;
    boolean hipri;
    int usedLength;
    private int result = PENDING;
    private String error;
    /** What the slot's owner attached to the request (the engine's I/O); cleared on release. */
    private Object context;

    RequestSlot(RequestQueue queue, int tag, long header, long status) {
        this.queue = queue;
        this.tag = tag;
        this.header = header;
        this.status = status;
    }

    /**
     * Writes the header (type, reserved, sector) and an unwritten status byte, and builds the chain: header
     * (device-readable), {@code data}, status (device-writable). The slot must not be in the device.
     */
    public void prepare(int type, long sector, List<BufferSpec> data, boolean polled, Object owner) {
        if (inDevice) {
            throw new IllegalStateException("slot " + tag + " of queue " + queue.index + " is in the device");
        }
        queue.memory.writeU32(header, type);
        queue.memory.writeU32(header + 4, 0);
        queue.memory.writeU64(header + 8, sector);
        queue.memory.writeU8(status, STATUS_UNWRITTEN);
        List<BufferSpec> c = new ArrayList<>(data.size() + 2);
        c.add(BufferSpec.readable(header, VirtioBlk.HEADER_SIZE));
        c.addAll(data);
        c.add(BufferSpec.writable(status, 1));
        chain = c;
        hipri = polled;
        context = owner;
        result = PENDING;
        error = null;
        usedLength = 0;
    }

    public RequestQueue queue() {
        return queue;
    }

    public int tag() {
        return tag;
    }

    /** Guest address of the header; its sector field is at +8 (section 5.2.6). */
    public long headerAddress() {
        return header;
    }

    public Object context() {
        return context;
    }

    public boolean hipri() {
        return hipri;
    }

    /** The status byte the device wrote (section 5.2.6), read from guest memory. */
    public int deviceStatus() {
        return queue.memory.readU8(status) & 0xFF;
    }

    /** The used element's len (bytes the device says it wrote). */
    public int usedLength() {
        return usedLength;
    }

    /** {@link #PENDING}, the device's status once collected, or {@link #DRIVER_FAILED}. */
    public int result() {
        return result;
    }

    /** Why the driver gave the request up, when {@link #result()} is {@link #DRIVER_FAILED}. */
    public String error() {
        return error;
    }

    void completed() {
        result = deviceStatus();
    }

    void fail(String reason) {
        inDevice = false;
        result = DRIVER_FAILED;
        error = reason;
    }

    void clear() {
        context = null;
        chain = null;
        hipri = false;
    }
}
