package io.kickplug.virtio.chain;

import java.nio.ByteBuffer;

/**
 * What {@link PooledChainReader} and {@link PooledChainWriter} share: a cursor over one side of a chain
 * ({@link Segments}) and, for a pooled cursor (its chain's own), one pooled spare for its first split per chain;
 * further splits make fresh cursors.
 *
 * @param <C> the concrete cursor
 */
abstract class PooledCursor<C extends PooledCursor<C>> {
    final Segments s;
    private final boolean pooled;
    /** True for the device-writable side. */
    private final boolean writable;
    private C spare;
    private boolean spareTaken;

    PooledCursor(Segments s, boolean pooled, boolean writable) {
        this.s = s;
        this.pooled = pooled;
        this.writable = writable;
    }

    /** A cursor of the same kind over {@code segments}. */
    abstract C create(Segments segments, boolean pooled);

    Segments segments() {
        return s;
    }

    /** The chain was reused: the spare cursor is free again. */
    final void recycle() {
        spareTaken = false;
    }

    public final long remaining() {
        return s.remaining();
    }

    public final long position() {
        return s.position;
    }

    /** Moves past {@code length} bytes of this side. */
    public final void skip(long length) {
        s.skip(length, writable);
    }

    /** The next {@code length} bytes of this side as buffers over guest memory, and moves past them. */
    public final ByteBuffer[] views(long length) {
        return s.views(length, writable);
    }

    /** The rest of this side from {@code offset}: the pooled spare the first time per chain, else a new cursor. */
    final C split(long offset) {
        if (pooled && !spareTaken) {
            if (spare == null) {
                spare = create(new Segments(s.memory), true);
            }
            s.splitAt(offset, writable, spare.s);
            spareTaken = true;
            spare.recycle();
            return spare;
        }
        return create(s.splitAt(offset, writable, new Segments(s.memory)), false);
    }
}
