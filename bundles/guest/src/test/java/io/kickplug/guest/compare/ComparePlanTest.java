package io.kickplug.guest.compare;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/** kp:compare's schedule (rounds interleaved), its medians and its options. */
class ComparePlanTest {

    @Test
    void roundsAreInterleavedEachCandidateOncePerRound() {
        ComparePlan plan = new ComparePlan(List.of("immediate", "bh", "defer-call"), 3);
        List<String> order = plan.steps().stream().map(s -> s.round() + ":" + s.candidate()).toList();
        assertEquals(List.of("0:immediate", "0:bh", "0:defer-call", "1:immediate", "1:bh", "1:defer-call",
                "2:immediate", "2:bh", "2:defer-call"), order);
    }

    @Test
    void aPlanRefusesNothingToCompareTwiceTheSameAndNoRounds() {
        assertThrows(IllegalArgumentException.class, () -> new ComparePlan(List.of(), 3));
        assertThrows(IllegalArgumentException.class, () -> new ComparePlan(List.of("bh", "bh"), 3));
        assertThrows(IllegalArgumentException.class, () -> new ComparePlan(List.of("bh"), 0));
    }

    @Test
    void medianOfOddAndEvenCountsLeavesNaNOut() {
        assertEquals(3.0, ComparePlan.median(List.of(9.0, 1.0, 3.0)));
        assertEquals(2.5, ComparePlan.median(List.of(4.0, 1.0, 3.0, 2.0)));
        assertEquals(7.0, ComparePlan.median(List.of(Double.NaN, 7.0)));
        assertTrue(Double.isNaN(ComparePlan.median(List.of(Double.NaN))));
        assertTrue(Double.isNaN(ComparePlan.median(List.of())));
    }

    @Test
    void aResultsMediansArePerCandidateOverItsRoundsOnly() {
        ComparePlan plan = new ComparePlan(List.of("a", "b"), 3);
        List<Sample> samples = new ArrayList<>();
        // a: 100, 300, 200 IOPS (1 s each); b: 10, 1000, 20; irq per request a: 1, 1, 0.5
        long[][] aFig = {{100, 100}, {300, 300}, {200, 100}};
        long[][] bFig = {{10, 5}, {1000, 10}, {20, 5}};
        for (int r = 0; r < 3; r++) {
            samples.add(new Sample("a", r, aFig[r][0], 1.0, aFig[r][0], aFig[r][1], aFig[r][0], 10, 20, -1,
                    List.of()));
            samples.add(new Sample("b", r, bFig[r][0], 1.0, bFig[r][0], bFig[r][1], 0, 30, 40, 2000 * bFig[r][0],
                    List.of()));
        }
        CompareResult result = new CompareResult("d0", "rw=randread", plan, samples, "now");
        assertEquals(200.0, result.median("a", CompareResult.Figure.IOPS));
        assertEquals(20.0, result.median("b", CompareResult.Figure.IOPS));
        assertEquals(1.0, result.median("a", CompareResult.Figure.IRQ_PER_REQ));
        assertEquals(0.25, result.median("b", CompareResult.Figure.IRQ_PER_REQ));
        assertEquals(0.0, result.median("b", CompareResult.Figure.KICK_PER_REQ));
        assertTrue(Double.isNaN(result.median("a", CompareResult.Figure.CPU_PER_IO)), "CPU unknown for a");
        assertEquals(2.0, result.median("b", CompareResult.Figure.CPU_PER_IO));
        String text = CompareFormat.text(result);
        assertTrue(text.contains("strategy"), text);
        String[] lines = text.split("\n");
        assertTrue(lines[2].startsWith("a ") && lines[2].contains(" 200 ") && lines[2].endsWith("-"), text);
        assertTrue(lines[3].startsWith("b ") && lines[3].contains("0.25"), text);
        String html = CompareFormat.html(result);
        assertTrue(html.contains("<svg") && html.contains(">a</text>") && html.contains(">b</text>"), html);
        String json = CompareFormat.json(result);
        assertTrue(json.contains("\"medians\":{\"a\":{\"iops\":200.0000,"), json);
        assertTrue(json.contains("\"cpu_per_io_ns\":null"), json);
    }

    @Test
    void optionsTakeTheJobAsKeyValuePairsAndAddTheComparisonsDefaults() {
        CompareOptions o = CompareOptions.parse(Arrays.asList("d0", "--strategies", "immediate,bh , defer-call",
                "--job", "rw=randread bs=4k iodepth=32 runtime=1", "--rounds=5", "--html", "/tmp/c.html"));
        assertEquals("d0", o.disk());
        assertEquals(List.of("immediate", "bh", "defer-call"), o.strategies());
        assertEquals(5, o.rounds());
        assertEquals(Path.of("/tmp/c.html"), o.html());
        assertEquals(List.of("--rw=randread", "--bs=4k", "--iodepth=32", "--runtime=1", "--ioengine=libaio",
                "--time_based=1"), o.jobArgs());
        CompareOptions d = CompareOptions.parse(List.of("d1"));
        assertEquals(List.of(), d.strategies());
        assertEquals(CompareOptions.DEFAULT_ROUNDS, d.rounds());
        assertEquals(CompareOptions.DEFAULT_JOB, d.job());
        assertEquals(List.of("/tmp/job.fio"), CompareOptions.parse(List.of("d1", "--job", "/tmp/job.fio")).jobArgs());
    }

    @Test
    void pollSettingsMultiplyTheStrategies() {
        CompareOptions o = CompareOptions.parse(List.of("d0", "--strategies", "bh,defer-call", "--poll", "off,on,100000"));
        assertEquals(List.of("bh/off", "bh/poll", "bh/poll:100000", "defer-call/off", "defer-call/poll",
                "defer-call/poll:100000"), Setting.of(o.strategies(), o.polls()).stream().map(Setting::label).toList());
        assertEquals(List.of("bh"), Setting.of(List.of("bh"), List.of()).stream().map(Setting::label).toList());
        assertThrows(IllegalArgumentException.class, () -> CompareOptions.parse(List.of("d0", "--poll", "sometimes")));
        assertThrows(IllegalArgumentException.class, () -> CompareOptions.parse(List.of("d0", "--poll", "0")));
        assertThrows(IllegalArgumentException.class, () -> CompareOptions.parse(List.of("d0", "--poll", "on,on")));
    }

    @Test
    void optionsRefuseWhatTheyCannotRun() {
        assertThrows(IllegalArgumentException.class, () -> CompareOptions.parse(List.of()));
        assertThrows(IllegalArgumentException.class, () -> CompareOptions.parse(List.of("d0", "d1")));
        assertThrows(IllegalArgumentException.class, () -> CompareOptions.parse(List.of("d0", "--rounds", "0")));
        assertThrows(IllegalArgumentException.class, () -> CompareOptions.parse(List.of("d0", "--rounds", "x")));
        assertThrows(IllegalArgumentException.class, () -> CompareOptions.parse(List.of("d0", "--strategies", "bh,bh")));
        assertThrows(IllegalArgumentException.class, () -> CompareOptions.parse(List.of("d0", "--job", "rw=read x")));
        String unknown = assertThrows(IllegalArgumentException.class,
                () -> CompareOptions.parse(List.of("d0", "--queue", "1"))).getMessage();
        assertTrue(unknown.contains("--queue"), unknown);
    }
}
