package io.kickplug.api.memory;

import org.osgi.annotation.versioning.ProviderType;

/**
 * A hold on guest memory by a party that touches it from its own threads (the host side that created it, a
 * simulated guest): memory that can be released stays mapped until every lease on it is closed, and is unmapped
 * the moment the last one closes (see {@link GuestMemory#lease}).
 */
@ProviderType
public interface MemoryLease extends AutoCloseable {

    /** A lease on memory that is never released early (plain off-heap memory, freed by the garbage collector). */
    MemoryLease NONE = () -> { };

    /**
     * Ends this lease; the caller's threads must not touch the memory any more. Idempotent; never throws.
     */
    @Override
    void close();
}
