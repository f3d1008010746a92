package io.kickplug.guest.fio;

import static org.junit.jupiter.api.Assertions.*;

import java.time.ZonedDateTime;
import java.util.List;
import java.util.function.Function;
import org.junit.jupiter.api.Test;

/** {@code kp:fio --html=FILE}: the option, the timeline and the page's two curves. */
class FioHtmlTest {

    @Test
    void htmlOptionIsParsedBesideTheJobOptions() {
        FioInvocation i = FioInvocation.parse(List.of("--rw=randread", "--html=out/f.html"), Function.identity());
        assertEquals("out/f.html", i.html());
        assertEquals(1, i.jobs().size());
        assertNull(FioInvocation.parse(List.of("--rw=randread"), Function.identity()).html());
        assertThrows(FioOptionException.class, () -> FioInvocation.parse(List.of("--rw=read", "--html="),
                Function.identity()));
    }

    @Test
    void theTimelineCountsCompletionsPerBinAndMerges() {
        IopsTimeline a = new IopsTimeline();
        a.record(0);
        a.record(IopsTimeline.BIN_NANOS - 1);
        a.record(5 * IopsTimeline.BIN_NANOS);
        IopsTimeline b = new IopsTimeline();
        b.record(100 * IopsTimeline.BIN_NANOS);
        a.add(b);
        assertEquals(101, a.bins());
        assertEquals(2, a.count(0));
        assertEquals(1, a.count(5));
        assertEquals(1, a.count(100));
        assertEquals(0, a.count(3));
        assertEquals(0, a.count(1000));
    }

    @Test
    void thePageHasALatencyCurveAndAnIopsCurveAndNothingExternal() {
        JobResult r = new JobResult("r<1>", 0);
        for (int i = 0; i < 1000; i++) {
            r.read().record(4096, 1_000, 10_000 + i * 10L, 11_000 + i * 10L);
            r.timeline().record(i * 1_000_000L);
        }
        r.runtimeNanos(1_000_000_000L);
        FioReport report = new FioReport(List.of(r), List.of(), new FioReport.GuestInfo("d0", 1 << 20, 1, 1, 0, 0,
                "outside-lock", 0, 0), ZonedDateTime.now());
        String html = FioHtml.write(report);
        assertTrue(html.startsWith("<!DOCTYPE html>"), html);
        assertEquals(2, html.split("<svg ", -1).length - 1, "latency percentiles and IOPS over time: " + html);
        assertEquals(2, html.split("<polyline ", -1).length - 1, html);
        assertTrue(html.contains("read: 1000 I/Os"), html);
        assertTrue(html.contains("<h2>r&lt;1&gt;</h2>"), html);
        assertFalse(html.contains("<script"), html);
        assertFalse(html.replace("http://www.w3.org/2000/svg", "").contains("http"), html);
        // 1000 completions over 100 bins of 10 ms: 10 per bin, 1000 IOPS throughout.
        assertTrue(html.contains(">1000.0</text>"), "the IOPS axis tops at the steady 1000 IOPS: " + html);
    }
}
