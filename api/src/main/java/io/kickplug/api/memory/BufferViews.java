package io.kickplug.api.memory;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;

/**
 * A reusable list of byte-buffer views into guest memory, owned by one cursor of one request (see
 * {@link GuestMemory#viewsInto}). In steady state it allocates nothing: a slot keeps the duplicate it made of a
 * memory chunk and only moves its position and limit when the next view falls in the same chunk, and the
 * exact-length arrays {@link #toArray()} returns are kept per length.
 *
 * <p>A view made by {@link #addRange} is a duplicate of a whole chunk whose {@code [position, limit)} is the
 * range: code that receives it must use relative access (position, remaining), as every {@code ByteBuffer}
 * consumer of the JDK does. The views, and the array, are valid until the next {@link #clear()}. Not
 * thread-safe: the request that owns it uses it on one thread at a time.
 */
public final class BufferViews {

    private ByteBuffer[] views = new ByteBuffer[2];
    /** The chunk each slot's view duplicates, or {@code null} for a view added as is. */
    private ByteBuffer[] bases = new ByteBuffer[2];
    private int count;
    /** Exact-length arrays, index = length; filled by {@link #toArray()}. */
    private ByteBuffer[][] exact = new ByteBuffer[3][];

    /** Empties the list; the buffers are kept for reuse. */
    public void clear() {
        count = 0;
    }

    public int count() {
        return count;
    }

    /** Appends {@code view} as it is (the allocating path of {@link GuestMemory#viewsInto}'s default). */
    public void add(ByteBuffer view) {
        grow();
        views[count] = view;
        bases[count] = null;
        count++;
    }

    /**
     * Appends a little-endian view of {@code base[index, index + length)}, reusing this slot's duplicate when it
     * was made of the same {@code base}. For {@link GuestMemory} implementations; {@code base} must be one of
     * their long-lived chunks, never a buffer made for this call.
     */
    public void addRange(ByteBuffer base, int index, int length) {
        grow();
        ByteBuffer view = views[count];
        if (view == null || bases[count] != base) {
            view = base.duplicate().order(ByteOrder.LITTLE_ENDIAN);
            views[count] = view;
            bases[count] = base;
        }
        // Limit first to the whole chunk, so that setting the position never fails on a smaller old limit.
        view.limit(view.capacity()).position(index).limit(index + length);
        count++;
    }

    private void grow() {
        if (count == views.length) {
            views = Arrays.copyOf(views, count * 2);
            bases = Arrays.copyOf(bases, count * 2);
        }
    }

    /** The views in order, in an array of exactly {@link #count()} elements that this list reuses. */
    public ByteBuffer[] toArray() {
        if (count >= exact.length) {
            exact = Arrays.copyOf(exact, count + 1);
        }
        ByteBuffer[] out = exact[count];
        if (out == null) {
            out = new ByteBuffer[count];
            exact[count] = out;
        }
        System.arraycopy(views, 0, out, 0, count);
        return out;
    }
}
