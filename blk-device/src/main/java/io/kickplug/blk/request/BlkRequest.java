package io.kickplug.blk.request;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import java.util.List;

/**
 * One parsed virtio-blk request (VIRTIO 1.2 section 5.2.6): {@code le32 type; le32 reserved; le64 sector;
 * u8 data[]; u8 status}. Built only by {@link BlkRequestParser}, which has already checked the framing.
 *
 * @param head head descriptor index, the id to push into the used ring
 * @param type the raw type field of the header
 * @param kind what {@code type} dispatches to
 * @param sector the sector field (unsigned; 512-byte units whatever the block size)
 * @param dataBytes bytes of data the request moves: read for OUT, written for IN, the id bytes for GET_ID,
 *     the lifetime bytes for GET_LIFETIME, the segment bytes for DISCARD/WRITE_ZEROES/SECURE_ERASE
 * @param source the data to write to the disk (OUT), limited to {@code dataBytes}; otherwise {@code null}
 * @param sink where read data, the id or the lifetime goes (IN, GET_ID, GET_LIFETIME), limited to
 *     {@code dataBytes}; otherwise {@code null}
 * @param status a one-byte writer over the last device-writable byte of the chain
 * @param rejection why the request must not reach the backend, or {@code null} when it may
 * @param segments the validated segments of a DISCARD, WRITE_ZEROES or SECURE_ERASE request, in request
 *     order (copied out of guest memory by the parser, so the guest cannot change them afterwards); empty
 *     for other types and for rejected requests
 */
public record BlkRequest(int head, int type, RequestType kind, long sector, long dataBytes, ChainReader source,
        ChainWriter sink, ChainWriter status, Rejection rejection, List<DiscardSegment> segments) {

    public BlkRequest {
        segments = segments == null ? List.of() : List.copyOf(segments);
    }

    /** A request without segments. */
    public BlkRequest(int head, int type, RequestType kind, long sector, long dataBytes, ChainReader source,
            ChainWriter sink, ChainWriter status, Rejection rejection) {
        this(head, type, kind, sector, dataBytes, source, sink, status, rejection, List.of());
    }

    /** True when the request is answered without touching the backend. */
    public boolean rejected() {
        return rejection != null;
    }

    /** Byte offset on the disk: {@code sector * 512}, in range because the parser checked the sector. */
    public long offset() {
        return sector * VirtioBlk.SECTOR_SIZE;
    }
}
