package io.kickplug.blk.request;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;

/**
 * One parsed virtio-blk request (VIRTIO 1.2 section 5.2.6): {@code le32 type; le32 reserved; le64 sector;
 * u8 data[]; u8 status}. Built only by {@link BlkRequestParser}, which has already checked the framing.
 *
 * @param head head descriptor index, the id to push into the used ring
 * @param type the raw type field of the header
 * @param kind what {@code type} dispatches to
 * @param sector the sector field (unsigned; 512-byte units whatever the block size)
 * @param dataBytes bytes of data the request moves: read for OUT, written for IN, the id bytes for GET_ID
 * @param source the data to write to the disk (OUT), limited to {@code dataBytes}; otherwise {@code null}
 * @param sink where read data or the id goes (IN, GET_ID), limited to {@code dataBytes}; otherwise
 *     {@code null}
 * @param status a one-byte writer over the last device-writable byte of the chain
 * @param rejection why the request must not reach the backend, or {@code null} when it may
 */
public record BlkRequest(int head, int type, RequestType kind, long sector, long dataBytes, ChainReader source,
        ChainWriter sink, ChainWriter status, Rejection rejection) {

    /** True when the request is answered without touching the backend. */
    public boolean rejected() {
        return rejection != null;
    }

    /** Byte offset on the disk: {@code sector * 512}, in range because the parser checked the sector. */
    public long offset() {
        return sector * VirtioBlk.SECTOR_SIZE;
    }
}
