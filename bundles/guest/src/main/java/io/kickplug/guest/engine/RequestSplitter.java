package io.kickplug.guest.engine;

import java.util.ArrayList;
import java.util.List;

/**
 * How Linux's block layer cuts one I/O into virtio-blk requests (blk_bio_segment_split against the queue
 * limits virtio_blk sets from the configuration space, VIRTIO 1.2 section 5.2.4).
 *
 * <p>Model of the data buffer: one segment per 4 KiB guest page, never merged with the next page. A job's
 * buffer is user memory whose pages are in general not physically contiguous (no transparent huge pages),
 * so Linux builds one scatter-gather element per page. size_max (the largest segment) is clamped to at
 * least a page, as Linux's blk_queue_max_segment_size does, so it never cuts a segment in this model. A
 * request holds at most {@code segMax} segments (max_segments = seg_max) and at most {@code maxRequestBytes}
 * (max_sectors).
 */
final class RequestSplitter {

    static final int PAGE = io.kickplug.guest.memory.GuestRam.PAGE;

    /** One device request: {@code length} bytes at disk byte {@code offset}, from the given segments. */
    record Part(long offset, int length, List<Segment> segments) {
    }

    /** A guest-physical run of bytes. */
    record Segment(long address, int length) {
    }

    private RequestSplitter() {
    }

    /**
     * @param offset disk byte offset of the I/O
     * @param length bytes, positive
     * @param address guest address of the data
     * @param segMax most segments per request, at least 1
     * @param maxRequestBytes most bytes per request, a positive multiple of 512
     */
    static List<Part> split(long offset, int length, long address, int segMax, int maxRequestBytes) {
        if (segMax < 1 || maxRequestBytes <= 0 || length <= 0) {
            throw new IllegalArgumentException("segMax " + segMax + ", maxRequestBytes " + maxRequestBytes
                    + ", length " + length);
        }
        List<Part> parts = new ArrayList<>();
        int done = 0;
        while (done < length) {
            List<Segment> segments = new ArrayList<>();
            int bytes = 0;
            while (done + bytes < length && segments.size() < segMax && bytes < maxRequestBytes) {
                long at = address + done + bytes;
                int inPage = PAGE - (int) (at & (PAGE - 1));
                int n = Math.min(inPage, Math.min(length - done - bytes, maxRequestBytes - bytes));
                segments.add(new Segment(at, n));
                bytes += n;
            }
            parts.add(new Part(offset + done, bytes, List.copyOf(segments)));
            done += bytes;
        }
        return parts;
    }
}
