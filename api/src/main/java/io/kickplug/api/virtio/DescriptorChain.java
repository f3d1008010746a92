package io.kickplug.api.virtio;

import org.osgi.annotation.versioning.ProviderType;

/**
 * One validated descriptor chain (section 2.7.5): its device-readable buffers followed by its
 * device-writable buffers, indirect tables already followed. Devices read and write it through the
 * cursors, never by descriptor index.
 *
 * <p>Lifetime: a chain, its cursors and the buffer views they return belong to the request until its head is
 * pushed to the used ring ({@link DeviceQueue#pushUsed}). After that the queue may reuse them for the next
 * chain with the same head (so that a request costs no allocation); do not keep them past the push.
 */
@ProviderType
public interface DescriptorChain {

    /** Head descriptor index, the id to push into the used ring. */
    int head();

    /** Number of buffers (descriptors) in the chain, indirect ones included. */
    int bufferCount();

    long readableBytes();

    long writableBytes();

    /**
     * Number of device-writable buffers, for a party that must know every guest address the device may have
     * written for this chain (vhost-user dirty logging marks them when the chain is pushed, after zero-copy I/O
     * wrote them through views). -1 when the implementation does not tell (the default): such a party must then
     * assume any address was written.
     *
     * @since 2.4
     */
    default int writableBufferCount() {
        return -1;
    }

    /**
     * Guest physical address of device-writable buffer {@code i} ({@code 0 <= i < writableBufferCount()}),
     * already checked against guest memory.
     *
     * @since 2.4
     */
    default long writableBufferAddress(int i) {
        throw new UnsupportedOperationException("this chain does not list its writable buffers");
    }

    /**
     * Length in bytes (unsigned 32-bit, in a long) of device-writable buffer {@code i}.
     *
     * @since 2.4
     */
    default long writableBufferLength(int i) {
        throw new UnsupportedOperationException("this chain does not list its writable buffers");
    }

    /** A cursor over the device-readable buffers, at their start (each call gives a new position). */
    ChainReader reader();

    /** A cursor over the device-writable buffers, at their start (each call gives a new position). */
    ChainWriter writer();

    /**
     * A hint: starts loading the first device-readable byte of the chain (a request header, which the driver wrote
     * on another CPU just before, so its read is usually a cache miss) as soon as the chain is popped, before the
     * device sets up its cursors and parses it. Reads nothing the cursors do not read anyway and changes nothing;
     * does nothing by default.
     */
    default void prefetch() {
    }
}
