package io.kickplug.virtio.queue;

/** Split-ring constants and index arithmetic (VIRTIO 1.2 section 2.7). */
public final class Ring {
    private Ring() {
    }

    /** Descriptor flags (section 2.7.5). */
    public static final int DESC_F_NEXT = 1;
    public static final int DESC_F_WRITE = 2;
    public static final int DESC_F_INDIRECT = 4;
    /** avail.flags: the driver asks for no used-buffer notification (section 2.7.7). */
    public static final int AVAIL_F_NO_INTERRUPT = 1;
    /** used.flags: the device asks for no available-buffer notification (section 2.7.10). */
    public static final int USED_F_NO_NOTIFY = 1;
    public static final int DESC_SIZE = 16;

    /**
     * The spec's {@code vring_need_event} (section 2.7.7.2 / 2.7.10.2): true when {@code eventIdx} lies in
     * the half-open window {@code [oldIdx, newIdx)} of 16-bit ring indices, that is when moving the index
     * from old to new passed the event index the other side asked to be told about.
     */
    public static boolean needEvent(int eventIdx, int newIdx, int oldIdx) {
        return ((newIdx - eventIdx - 1) & 0xffff) < ((newIdx - oldIdx) & 0xffff);
    }

    /** Entries between two free-running 16-bit indices ({@code to - from} mod 2^16). */
    public static int distance(int from, int to) {
        return (to - from) & 0xffff;
    }

    // Field offsets.
    static long availIdx(long avail) {
        return avail + 2;
    }

    static long availRing(long avail, int slot) {
        return avail + 4 + 2L * slot;
    }

    /** used_event lives after the available ring's entries (section 2.7.6). */
    static long usedEvent(long avail, int size) {
        return avail + 4 + 2L * size;
    }

    static long usedIdx(long used) {
        return used + 2;
    }

    static long usedElem(long used, int slot) {
        return used + 4 + 8L * slot;
    }

    /** avail_event lives after the used ring's elements (section 2.7.8). */
    static long availEvent(long used, int size) {
        return used + 4 + 8L * size;
    }
}
