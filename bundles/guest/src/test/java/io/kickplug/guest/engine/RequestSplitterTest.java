package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.*;

import io.kickplug.guest.engine.RequestSplitter.Part;
import io.kickplug.guest.engine.RequestSplitter.Segment;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestSplitterTest {

    @Test
    void onePagePerSegmentAndSegMaxSegmentsPerRequest() {
        // 8 pages with seg_max 6 (VIRTIO 1.2 section 5.2.4): 6 pages, then 2.
        List<Part> parts = RequestSplitter.split(1 << 20, 8 * 4096, 0x10000, 6, 1 << 20);
        assertEquals(2, parts.size());
        assertEquals(new Part(1 << 20, 6 * 4096, List.of(new Segment(0x10000, 4096), new Segment(0x11000, 4096),
                new Segment(0x12000, 4096), new Segment(0x13000, 4096), new Segment(0x14000, 4096),
                new Segment(0x15000, 4096))), parts.get(0));
        assertEquals(new Part((1 << 20) + 6 * 4096, 2 * 4096, List.of(new Segment(0x16000, 4096),
                new Segment(0x17000, 4096))), parts.get(1));
    }

    @Test
    void segMaxOneMakesOneRequestPerPage() {
        List<Part> parts = RequestSplitter.split(0, 3 * 4096, 0x2000, 1, 1 << 20);
        assertEquals(List.of(0L, 4096L, 8192L), parts.stream().map(Part::offset).toList());
        parts.forEach(p -> assertEquals(1, p.segments().size()));
    }

    @Test
    void subPageIoIsOneSegment() {
        assertEquals(List.of(new Part(512, 1024, List.of(new Segment(0x3000, 1024)))),
                RequestSplitter.split(512, 1024, 0x3000, 1, 1 << 20));
    }

    @Test
    void maxRequestBytesCutsRequestsEvenInsideAPage() {
        List<Part> parts = RequestSplitter.split(0, 8192, 0x4000, 128, 3072);
        assertEquals(List.of(3072, 3072, 2048), parts.stream().map(Part::length).toList());
        assertEquals(List.of(new Segment(0x4000 + 3072, 1024), new Segment(0x5000, 2048)), parts.get(1).segments());
    }

    @Test
    void unalignedBufferStartsWithAPartialPage() {
        List<Part> parts = RequestSplitter.split(0, 4096, 0x1200, 2, 1 << 20);
        assertEquals(List.of(new Segment(0x1200, 0xE00), new Segment(0x2000, 0x200)), parts.get(0).segments());
    }
}
