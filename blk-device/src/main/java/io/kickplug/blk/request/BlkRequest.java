package io.kickplug.blk.request;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import java.util.List;

/**
 * One parsed virtio-blk request (VIRTIO 1.2 section 5.2.6): {@code le32 type; le32 reserved; le64 sector;
 * u8 data[]; u8 status}. Filled only by {@link BlkRequestParser}, which has already checked the framing.
 *
 * <p>Reusable: a queue keeps one per descriptor head and the parser refills it ({@link BlkRequestParser#parseInto})
 * each time that head is popped, so a request costs no allocation. The queue pops a head again only after it
 * was pushed to the used ring (section 2.7.13), so a request is never refilled while it is in flight. Fields
 * (all set by the parser):
 * <ul>
 * <li>{@code head}: head descriptor index, the id to push into the used ring;</li>
 * <li>{@code type}: the raw type field of the header; {@code kind}: what it dispatches to;</li>
 * <li>{@code sector}: the sector field (unsigned; 512-byte units whatever the block size);</li>
 * <li>{@code dataBytes}: bytes of data the request moves: read for OUT, written for IN, the id bytes for
 * GET_ID, the lifetime bytes for GET_LIFETIME, the segment bytes for DISCARD/WRITE_ZEROES/SECURE_ERASE;</li>
 * <li>{@code source}: the data to write to the disk (OUT), limited to {@code dataBytes}; otherwise
 * {@code null};</li>
 * <li>{@code sink}: where read data, the id or the lifetime goes (IN, GET_ID, GET_LIFETIME), limited to
 * {@code dataBytes}; otherwise {@code null};</li>
 * <li>{@code status}: a one-byte writer over the last device-writable byte of the chain;</li>
 * <li>{@code rejection}: why the request must not reach the backend, or {@code null} when it may;</li>
 * <li>{@code segments}: the validated segments of a DISCARD, WRITE_ZEROES or SECURE_ERASE request, in request
 * order (copied out of guest memory by the parser, so the guest cannot change them afterwards); empty for
 * other types and for rejected requests.</li>
 * </ul>
 * The executor records the data bytes it wrote into the chain with {@link #dataWritten(long)}.
 */
public final class BlkRequest {

    private int head;
    private int type;
    private RequestType kind;
    private long sector;
    private long dataBytes;
    private ChainReader source;
    private ChainWriter sink;
    private ChainWriter status;
    private Rejection rejection;
    private List<DiscardSegment> segments = List.of();
    private long dataWritten;

    /** An empty request, for a pool; {@link BlkRequestParser#parseInto} fills it. */
    public BlkRequest() {
    }

    public BlkRequest(int head, int type, RequestType kind, long sector, long dataBytes, ChainReader source,
            ChainWriter sink, ChainWriter status, Rejection rejection, List<DiscardSegment> segments) {
        set(head, type, kind, sector, dataBytes, source, sink, status, rejection, segments);
    }

    /** A request without segments. */
    public BlkRequest(int head, int type, RequestType kind, long sector, long dataBytes, ChainReader source,
            ChainWriter sink, ChainWriter status, Rejection rejection) {
        this(head, type, kind, sector, dataBytes, source, sink, status, rejection, List.of());
    }

    BlkRequest set(int head, int type, RequestType kind, long sector, long dataBytes, ChainReader source,
            ChainWriter sink, ChainWriter status, Rejection rejection, List<DiscardSegment> segments) {
        this.head = head;
        this.type = type;
        this.kind = kind;
        this.sector = sector;
        this.dataBytes = dataBytes;
        this.source = source;
        this.sink = sink;
        this.status = status;
        this.rejection = rejection;
        this.segments = segments == null || segments.isEmpty() ? List.of() : List.copyOf(segments);
        this.dataWritten = 0;
        return this;
    }

    BlkRequest set(int head, int type, RequestType kind, long sector, long dataBytes, ChainReader source,
            ChainWriter sink, ChainWriter status, Rejection rejection) {
        return set(head, type, kind, sector, dataBytes, source, sink, status, rejection, List.of());
    }

    public int head() {
        return head;
    }

    public int type() {
        return type;
    }

    public RequestType kind() {
        return kind;
    }

    public long sector() {
        return sector;
    }

    public long dataBytes() {
        return dataBytes;
    }

    public ChainReader source() {
        return source;
    }

    public ChainWriter sink() {
        return sink;
    }

    public ChainWriter status() {
        return status;
    }

    public Rejection rejection() {
        return rejection;
    }

    public List<DiscardSegment> segments() {
        return segments;
    }

    /** True when the request is answered without touching the backend. */
    public boolean rejected() {
        return rejection != null;
    }

    /** Byte offset on the disk: {@code sector * 512}, in range because the parser checked the sector. */
    public long offset() {
        return sector * VirtioBlk.SECTOR_SIZE;
    }

    /** The data bytes the executor wrote into the chain (the used length without the status byte). */
    public long dataWritten() {
        return dataWritten;
    }

    public void dataWritten(long bytes) {
        this.dataWritten = bytes;
    }

    @Override
    public String toString() {
        return "BlkRequest[head=" + head + ", type=" + type + ", kind=" + kind + ", sector="
                + Long.toUnsignedString(sector) + ", dataBytes=" + dataBytes
                + (rejection != null ? ", rejection=" + rejection : "") + "]";
    }
}
