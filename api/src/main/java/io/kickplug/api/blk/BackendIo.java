package io.kickplug.api.blk;

import java.io.IOException;
import java.nio.ByteBuffer;
import org.osgi.annotation.versioning.ProviderType;

/**
 * One operation of the asynchronous backend contract ({@link AsyncBlockBackend#submit}). The device makes one per
 * request slot and reuses it for every operation of that slot, so a submission allocates nothing; a backend must
 * therefore keep no reference to it (nor to its {@link #buffers()}) after calling {@link #complete}.
 *
 * <p>Offsets and lengths are in bytes and already checked against the backend's size; every field is fixed from
 * {@link AsyncBlockBackend#submit} until {@link #complete}.
 */
@ProviderType
public interface BackendIo {

    /** What the operation does. */
    enum Op {
        /** Fill {@link #buffers()} from {@link #offset()}. */
        READ,
        /** Write {@link #buffers()} at {@link #offset()}; durable before completion when {@link #fua()}. */
        WRITE,
        /** Make every completed write durable. */
        FLUSH,
        /** Drop {@link #length()} bytes from {@link #offset()} (only when the backend supports discard). */
        DISCARD,
        /** Zero {@link #length()} bytes from {@link #offset()}, deallocating them when {@link #mayUnmap()}. */
        WRITE_ZEROES
    }

    Op op();

    long offset();

    /** Bytes the operation covers: the buffers' remaining bytes for READ and WRITE, 0 for FLUSH. */
    long length();

    /** READ: filled; WRITE: written; their remaining bytes, in order. Empty for the other operations. */
    ByteBuffer[] buffers();

    /**
     * WRITE and WRITE_ZEROES: the data must be durable when the operation completes (force unit access); only
     * asked of a backend whose {@link AsyncBlockBackend#supportsFua()} is true.
     */
    boolean fua();

    /** WRITE_ZEROES: the range may be deallocated (virtio-blk's UNMAP flag, NBD's absence of NO_HOLE). */
    boolean mayUnmap();

    /**
     * Ends the operation, {@code error} {@code null} on success. Called exactly once, from any thread, possibly
     * inside {@link AsyncBlockBackend#submit} itself; the device hands the completion to the queue's I/O thread.
     */
    void complete(IOException error);
}
