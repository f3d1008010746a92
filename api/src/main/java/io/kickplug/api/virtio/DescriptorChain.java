package io.kickplug.api.virtio;

import org.osgi.annotation.versioning.ProviderType;

/**
 * One validated descriptor chain (section 2.7.5): its device-readable buffers followed by its
 * device-writable buffers, indirect tables already followed. Devices read and write it through the
 * cursors, never by descriptor index.
 */
@ProviderType
public interface DescriptorChain {

    /** Head descriptor index, the id to push into the used ring. */
    int head();

    /** Number of buffers (descriptors) in the chain, indirect ones included. */
    int bufferCount();

    long readableBytes();

    long writableBytes();

    /** A fresh cursor over the device-readable buffers. */
    ChainReader reader();

    /** A fresh cursor over the device-writable buffers. */
    ChainWriter writer();
}
