package io.kickplug.api.blk;

import org.osgi.annotation.versioning.ProviderType;

/**
 * The block requests of an attached disk, for a server that serves the disk to another process without a virtio
 * device (the NBD export): reads, writes, flushes, discards and write-zeroes go to the same backend, through the
 * same filters (throttle), as the disk's guest I/O, and are ordered against the guest's requests in the disk's
 * tracked-requests list (a FLUSH waits for the writes accepted before it, a DISCARD or WRITE_ZEROES and the
 * requests overlapping it wait for each other). Obtained from {@link DiskManager#openPort}.
 *
 * <p>Many requests may be in flight at once, from any number of threads. Each {@link BackendIo} submitted is
 * completed exactly once, also when the port closes meanwhile: {@link #close} and a detach of the disk wait for the
 * requests in flight to finish in the backend before they return. After that, a submission fails at once.
 */
@ProviderType
public interface DiskPort extends AutoCloseable {

    /** The disk's name. */
    String disk();

    /** The disk's size in bytes now (a multiple of {@link #logicalBlockSize()}; it changes with a resize). */
    long size();

    /** The disk's logical block size, the alignment its backend needs (512). */
    int logicalBlockSize();

    /** Whether writes, discards and write-zeroes are refused (the disk was attached read-only). */
    boolean readOnly();

    /** Whether {@link BackendIo.Op#DISCARD} does anything; without it, a DISCARD fails. */
    boolean supportsDiscard();

    /** Whether {@link BackendIo.Op#WRITE_ZEROES} is supported; without it, a WRITE_ZEROES fails. */
    boolean supportsWriteZeroes();

    /**
     * Starts {@code io}; its {@link BackendIo#complete} is called exactly once, maybe before this returns, from any
     * thread (the disk's I/O threads among them: it must not block). A {@link BackendIo#fua()} WRITE, WRITE_ZEROES
     * or DISCARD is durable when it completes (the port adds a flush where the backend has no FUA). A range outside
     * the disk, a buffer whose remaining bytes differ from {@link BackendIo#length()}, a write to a read-only disk,
     * an operation the backend does not support, or a port that is closed, completes {@code io} with an
     * {@link java.io.IOException} saying so; nothing is thrown.
     */
    void submit(BackendIo io);

    /** Submissions made so far may start now (a backend may hold a batch until then). Callable from any thread. */
    void unplug();

    /**
     * Refuses new submissions, waits (up to 30 s) for the requests in flight to complete, and lets the disk go.
     * Idempotent. The {@code detached} action given to {@link DiskManager#openPort} does not run then.
     */
    @Override
    void close();
}
