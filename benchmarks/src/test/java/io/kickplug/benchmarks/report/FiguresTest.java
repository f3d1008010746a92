package io.kickplug.benchmarks.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

class FiguresTest {

    static final String PROVENANCE = """
            "provenance": {"command": "java -cp benchmarks/target/benchmarks.jar io.kickplug.benchmarks.vhost.VhostBench \
            --runs 3 --runtime 3 --depths 1,32 --backends null --json docs/results/vhost-bench.json",
              "git_commit": "0123456789abcdef0123456789abcdef01234567", "date": "2026-12-05T10:00:00Z",
              "machine": {"cpu_model": "AMD EPYC", "cores": 2, "cpus_allowed": "0-1", "kernel": "6.1.0 amd64",
                "jvm": "OpenJDK 64-Bit Server VM 17.0.15", "loadavg_start": {"1min": 1.5, "5min": 0.75, "15min": 0.25}}}""";

    /** A VhostBench result: two points whose median ratios are {@code a} and {@code b} (IOPS) and a/2, b/2 (CPU). */
    static String vhost(double a, double b) {
        return "{\"benchmark\": \"VhostBench\", " + PROVENANCE + ", \"options\": {}, \"workload\": \"4 KiB reads\","
                + " \"qsd\": \"qemu-storage-daemon version 7.2\", \"median_rule\": \"r\", \"points\": ["
                + point("null", 1, a) + ", " + point("null", 32, b) + "]}";
    }

    private static String point(String backend, int depth, double r) {
        String run = "{\"iops\": 1000, \"cpu_us_per_io\": 2, \"p50_ns\": 1, \"p99_ns\": 1, \"p999_ns\": 1,"
                + " \"kicks_per_io\": 1, \"waits_per_io\": 1}";
        String server = "{\"runs\": [" + run + ", " + run + ", " + run + "], \"median_run\": 1, \"median\": " + run + "}";
        String ratio = "{\"runs\": [" + r * 0.9 + ", " + r + ", " + r * 1.1 + "], \"median\": " + r
                + ", \"of_medians\": " + r + "}";
        String half = "{\"runs\": [" + r / 2 + ", " + r / 2 + ", " + r / 2 + "], \"median\": " + r / 2
                + ", \"of_medians\": " + r / 2 + "}";
        return "{\"backend\": \"" + backend + "\", \"depth\": " + depth + ", \"kickplug\": " + server + ", \"qsd\": "
                + server + ", \"ratios\": {\"iops\": " + ratio + ", \"cpu_per_io\": " + half + ", \"p50\": " + half
                + ", \"p99\": " + half + ", \"p999\": " + half + "}}";
    }

    /** A seeds result: seed 003 (percent) with {@code published} and {@code measured}, and seed 001 (-93%). */
    static String seeds(double published, double measured, String rounds) {
        return "{\"benchmark\": \"kp:bench seeds\", " + PROVENANCE + ", \"started\": \"t\", \"runtime_s\": 3,"
                + " \"host_cpus\": 2, \"host_load\": {\"busy_cores\": 1.9, \"own_cores\": 1.2, \"other_cores\": 0.7,"
                + " \"loadavg_1min_start\": 1, \"loadavg_1min_end\": 2, \"shared\": true}, \"seeds\": ["
                + seed("003", published, measured, rounds, "[{\"label\": \"hipri=0\", \"params\": {\"rounds\": \"3\"},"
                        + " \"figures\": {\"IOPS\": 1000, \"IOPS-rounds-min\": 500, \"IOPS-rounds-max\": 1500}},"
                        + " {\"label\": \"hipri=1\", \"params\": {}, \"figures\": {\"IOPS\": 2000}}]")
                + ", " + seed("001", -93, -186, "[]", "[]") + "]}";
    }

    private static String seed(String id, double published, double measured, String rounds, String points) {
        return "{\"id\": \"" + id + "\", \"title\": \"title " + id + "\", \"verdict\": \"matches\","
                + " \"magnitude_ratio\": " + measured / published + ", \"within_2x\": true, \"effect\": {\"measure\":"
                + " \"IOPS change, %\", \"unit\": \"percent\", \"published\": " + published + ", \"measured\": "
                + measured + ", \"rounds\": " + rounds + "}, \"points\": " + points + "}";
    }

    /** A bar's height follows its value: 2.0x is twice as tall as 1.0x, from the same baseline; 1.0x meets parity. */
    @Test
    void vhostBarHeightFollowsItsValueAndParityIsMarked() throws Exception {
        Document svg = svg(VhostFigure.draw(Json.parse(vhost(1.0, 2.0), "v.json"), "docs/results/v.json"));
        Element one = byId(svg, "iops-null-QD1-bar");
        Element two = byId(svg, "iops-null-QD32-bar");
        assertEquals(2 * num(one, "height"), num(two, "height"), 0.15);
        assertEquals(num(one, "y") + num(one, "height"), num(two, "y") + num(two, "height"), 0.1, "one baseline");
        Element parity = byId(svg, "iops-parity");
        assertEquals(num(one, "y"), num(parity, "y1"), 0.1, "the 1.0x line is where a 1.0x bar ends");
        assertEquals(num(parity, "y1"), num(parity, "y2"));
        // Each run a dot at its own value: run 2 is the median here, run 3 is 10% above it.
        assertEquals(num(two, "y"), num(byId(svg, "iops-null-QD32-run2"), "cy"), 0.1);
        double base = num(two, "y") + num(two, "height");
        assertEquals(1.1 * num(two, "height"), base - num(byId(svg, "iops-null-QD32-run3"), "cy"), 0.15);
        // The CPU panel: a/2 and b/2.
        assertEquals(2 * num(byId(svg, "cpu_per_io-null-QD1-bar"), "height"),
                num(byId(svg, "cpu_per_io-null-QD32-bar"), "height"), 0.15);
        assertNotNull(byId(svg, "cpu_per_io-parity"));
        // Scaled up, the same bar is taller: heights are values, not ranks.
        Document bigger = svg(VhostFigure.draw(Json.parse(vhost(1.0, 3.0), "v.json"), "v"));
        assertEquals(3 * num(byId(bigger, "iops-null-QD1-bar"), "height"), num(byId(bigger, "iops-null-QD32-bar"),
                "height"), 0.15);
    }

    /** Every figure says where its data came from: command, machine, date, commit, the result file. */
    @Test
    void theCaptionNamesCommandMachineAndDate() throws Exception {
        String text = String.join(" ", texts(svg(VhostFigure.draw(Json.parse(vhost(1, 2), "v.json"),
                "docs/results/vhost-bench.json"))));
        assertTrue(text.contains("$ java -cp benchmarks/target/benchmarks.jar io.kickplug.benchmarks.vhost.VhostBench"),
                text);
        assertTrue(text.contains("--json docs/results/vhost-bench.json"), text);
        assertTrue(text.contains("Machine: AMD EPYC, 2 cores (process on CPUs 0-1), Linux 6.1.0 amd64, OpenJDK 64-Bit"
                + " Server VM 17.0.15; load average 1.50 / 0.75 / 0.25 (1/5/15 min) at the start"), text);
        assertTrue(text.contains("Run 2026-12-05T10:00:00Z, commit 0123456789abcdef0123456789abcdef01234567. Data:"
                + " docs/results/vhost-bench.json; figure: scripts/figures.sh"), text);
        String seeds = String.join(" ", texts(svg(SeedsFigure.effects(Json.parse(seeds(20, 40, "[]"), "s.json"),
                "docs/results/seeds.json"))));
        assertTrue(seeds.contains("Machine: AMD EPYC") && seeds.contains("Run 2026-12-05T10:00:00Z"), seeds);
    }

    /** The band is within 2x of the published effect: from half to twice it, on the published side of zero. */
    @Test
    void theTwoXBandSpansHalfToTwiceThePublishedEffect() throws Exception {
        Document svg = svg(SeedsFigure.effects(Json.parse(seeds(20, 40, "[]"), "s.json"), "s"));
        Element band = byId(svg, "seed003-band");
        Element published = byId(svg, "seed003-published");
        Element measured = byId(svg, "seed003-measured");
        double zero = num(published, "y") + num(published, "height");
        // measured = 40 = twice the published: its top is the band's top; the band reaches down to 10, half of it.
        assertEquals(num(measured, "y"), num(band, "y"), 0.1);
        assertEquals(2 * num(published, "height"), num(measured, "height"), 0.15);
        assertEquals(1.5 * num(published, "height"), num(band, "height"), 0.15);
        assertEquals(zero - num(published, "height") / 2, num(band, "y") + num(band, "height"), 0.1);
        // A negative published effect (seed 001, -93%): bars grow down from zero, the band from -46.5% to -186%.
        Element band1 = byId(svg, "seed001-band");
        Element pub1 = byId(svg, "seed001-published");
        Element meas1 = byId(svg, "seed001-measured");
        assertEquals(num(pub1, "y"), num(meas1, "y"), 0.1, "both start at zero");
        assertEquals(num(meas1, "y") + num(meas1, "height"), num(band1, "y") + num(band1, "height"), 0.1,
                "-186% is the band's far edge");
        assertEquals(num(pub1, "y") + num(pub1, "height") / 2, num(band1, "y"), 0.1, "-46.5% its near edge");
        assertEquals(texts(svg).stream().filter(t -> t.equals("+40.0%")).count(), 1);
    }

    /** Rounds: a dot per round at its effect, a whisker from the lowest to the highest; none without rounds. */
    @Test
    void eachRoundIsADotWithTheRoundsRangeAsAWhisker() throws Exception {
        Document svg = svg(SeedsFigure.effects(Json.parse(seeds(20, 15, "[10, 15, 30]"), "s.json"), "s"));
        Element published = byId(svg, "seed003-published");
        double zero = num(published, "y") + num(published, "height");
        double perUnit = num(published, "height") / 20;
        assertEquals(zero - 10 * perUnit, num(byId(svg, "seed003-round1"), "cy"), 0.15);
        assertEquals(zero - 30 * perUnit, num(byId(svg, "seed003-round3"), "cy"), 0.15);
        Element whisker = byId(svg, "seed003-whisker");
        assertEquals(zero - 10 * perUnit, num(whisker, "y1"), 0.15);
        assertEquals(zero - 30 * perUnit, num(whisker, "y2"), 0.15);
        assertNull(byIdOrNull(svg, "seed001-whisker"), "seed 001 ran once");
        assertNull(byIdOrNull(svg(SeedsFigure.effects(Json.parse(seeds(20, 15, "[15]"), "s.json"), "s")),
                "seed003-whisker"), "one round is no spread");
    }

    /**
     * An unstable seed (its rounds disagree) says so under its panel with the rounds' range, in orange, not as a
     * magnitude; a stable one with rounds gives the range beside its verdict. A file written before rounds were
     * recorded (no {@code rounds}, no {@code unstable}) still draws, without whiskers.
     */
    @Test
    void anUnstableSeedSaysSoWithItsRangeAndOldFilesStillDraw() throws Exception {
        String unstable = seeds(20, 15, "[1, 15, 30]").replaceFirst("\"verdict\": \"matches\"",
                "\"verdict\": \"unstable\", \"unstable\": true").replaceFirst("\"within_2x\": true",
                "\"within_2x\": null").replaceFirst("\"rounds\": \\[1, 15, 30\\]",
                "\"rounds\": [1, 15, 30], \"spread\": {\"rounds\": 3}");
        List<String> text = texts(svg(SeedsFigure.effects(Json.parse(unstable, "s.json"), "s")));
        assertTrue(text.contains("direction: matches in every round"), "no flip: the direction holds; " + text);
        List<String> flips = texts(svg(SeedsFigure.effects(Json.parse(unstable.replace("\"spread\": {\"rounds\": 3}",
                "\"spread\": {\"rounds\": 3, \"direction_flips\": true}"), "s.json"), "s")));
        assertTrue(flips.contains("direction: flips between rounds"), flips.toString());
        assertTrue(text.contains("unstable: rounds 0.05x to 1.50x"), text.toString());
        assertTrue(String.join(" ", text).contains("Blue: measured, the median round's effect"), text.toString());
        List<String> stable = texts(svg(SeedsFigure.effects(Json.parse(seeds(20, 15, "[10, 15, 30]"), "s.json"), "s")));
        assertTrue(stable.contains("rounds 0.50x to 1.50x"), stable.toString());
        assertTrue(String.join(" ", stable).contains("Blue: measured, the effect of each configuration's median round"),
                "an older file: the measured effect as it was taken then");
        String old = seeds(20, 15, "[]").replace(", \"rounds\": []", "");
        Document svg = svg(SeedsFigure.effects(Json.parse(old, "s.json"), "s"));
        assertNotNull(byId(svg, "seed003-measured"));
        assertNull(byIdOrNull(svg, "seed003-whisker"));
    }

    /** A round far beyond the rest is a triangle at the axis's edge with its value: the band keeps its size. */
    @Test
    void anOutlierRoundIsAnArrowAtTheEdgeWithItsValue() throws Exception {
        Document plain = svg(SeedsFigure.effects(Json.parse(seeds(20, 15, "[10, 15, 30]"), "s.json"), "s"));
        Document wild = svg(SeedsFigure.effects(Json.parse(seeds(20, 15, "[10, 15, 300]"), "s.json"), "s"));
        Element round = byId(wild, "seed003-round3");
        assertEquals("polygon", round.getLocalName());
        assertEquals("round 3: +300.0%", round.getTextContent());
        assertTrue(texts(wild).contains("+300.0%"), "its value beside it");
        double bandPlain = num(byId(plain, "seed003-band"), "height");
        double bandWild = num(byId(wild, "seed003-band"), "height");
        // The axis reaches 60% past the span of zero, band and bars, then the next tick (80 here, 40 without the
        // outlier): the band keeps half its height, where an axis out to 300 would leave it a tenth.
        assertTrue(bandWild >= bandPlain * 0.45, "the band is not flattened: " + bandWild + " against " + bandPlain);
        Element whisker = byId(wild, "seed003-whisker");
        double top = num(byId(wild, "seed003-published"), "y") + num(byId(wild, "seed003-published"), "height")
                - num(byId(wild, "seed003-published"), "height") * 80 / 20; // the axis ends at 80
        assertEquals(top, num(whisker, "y2"), 0.2, "the whisker runs to the edge");
        assertEquals("circle", byId(wild, "seed003-round2").getLocalName(), "the others stay dots");
    }

    /** The points figure: a bar per point as long as its IOPS, the rounds' range as a whisker where there is one. */
    @Test
    void pointsBarsFollowIopsWithTheRoundsRange() throws Exception {
        Document svg = svg(SeedsFigure.points(Json.parse(seeds(20, 40, "[]"), "s.json"), "s"));
        Element p1 = byId(svg, "seed003-point1-bar");
        Element p2 = byId(svg, "seed003-point2-bar");
        assertEquals(2 * num(p1, "width"), num(p2, "width"), 0.15);
        Element w = byId(svg, "seed003-point1-whisker");
        double perIops = num(p1, "width") / 1000;
        assertEquals(num(p1, "x") + 500 * perIops, num(w, "x1"), 0.15);
        assertEquals(num(p1, "x") + 1500 * perIops, num(w, "x2"), 0.15);
        assertNull(byIdOrNull(svg, "seed003-point2-whisker"));
    }

    /** Same JSON, same bytes: twice, and under a locale that writes decimal commas. */
    @Test
    void theSameJsonGivesTheSameBytes(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("seeds.json"), seeds(20, 15, "[10, 15, 30]"));
        Files.writeString(dir.resolve("vhost-bench.json"), vhost(1.25, 0.8));
        Map<String, String> first = Figures.figures(dir);
        assertEquals(List.of("seeds-points.svg", "seeds.svg", "vhost-bench.svg"), List.copyOf(first.keySet()));
        Locale before = Locale.getDefault();
        try {
            Locale.setDefault(Locale.GERMANY);
            assertEquals(first, Figures.figures(dir));
        } finally {
            Locale.setDefault(before);
        }
        assertEquals(first, Figures.figures(dir));
        for (String f : first.values()) {
            svg(f); // well-formed XML
            assertTrue(!f.contains("NaN") && !f.contains("Infinity"), f);
        }
    }

    /** The check names each figure that is missing or differs, where, and the command that regenerates them. */
    @Test
    void theCheckNamesTheFileTheLineAndTheCommand(@TempDir Path dir) throws Exception {
        Path results = Files.createDirectories(dir.resolve("results"));
        Path figures = Files.createDirectories(dir.resolve("figures"));
        Files.writeString(results.resolve("vhost-bench.json"), vhost(1.25, 0.8));
        Map<String, String> made = Figures.figures(results);
        assertEquals(List.of(figures.resolve("vhost-bench.svg") + " is missing; regenerate the figures with"
                + " scripts/figures.sh"), Figures.check(made, figures));
        Files.writeString(figures.resolve("vhost-bench.svg"), made.get("vhost-bench.svg"));
        assertEquals(List.of(), Figures.check(made, figures));
        Files.writeString(results.resolve("vhost-bench.json"), vhost(1.5, 0.8));
        List<String> problems = Figures.check(Figures.figures(results), figures);
        assertEquals(1, problems.size());
        assertTrue(problems.get(0).startsWith(figures.resolve("vhost-bench.svg") + " differs from what Figures makes"
                + " of its result file (line "), problems.get(0));
        java.util.regex.Matcher m = java.util.regex.Pattern.compile("the file has (\".*\"), the generator makes"
                + " (\".*\")\\); regenerate").matcher(problems.get(0));
        assertTrue(m.find(), problems.get(0));
        assertTrue(!m.group(1).equals(m.group(2)), "the excerpts show the difference: " + problems.get(0));
        assertTrue(problems.get(0).endsWith("; regenerate the figures with scripts/figures.sh"), problems.get(0));
    }

    /** A result file of an unknown benchmark, or one lacking what its figure needs, is an error naming it. */
    @Test
    void anUnknownOrIncompleteResultIsAnErrorNamingTheFile(@TempDir Path dir) throws Exception {
        Files.writeString(dir.resolve("x.json"), "{\"benchmark\": \"fio\"}");
        Json.JsonException e = assertThrows(Json.JsonException.class, () -> Figures.figures(dir));
        assertEquals(dir.resolve("x.json") + ": $.benchmark is \"fio\": no figure for it (known: VhostBench,"
                + " kp:bench seeds)", e.getMessage());
        Files.writeString(dir.resolve("x.json"), vhost(1, 2).replace("\"cpu_model\"", "\"cpu\""));
        e = assertThrows(Json.JsonException.class, () -> Figures.figures(dir));
        assertEquals(dir.resolve("x.json") + ": $.provenance.machine has no member \"cpu_model\"", e.getMessage());
    }

    @Test
    void theFirstDifferenceIsShownWhereItIs() {
        String line = "<rect id=\"x\" y=\"1\"><title>" + "a long tooltip ".repeat(8) + "+37.6%</title></rect>";
        String diff = Figures.firstDifference("a\n" + line + "\n", "a\n" + line.replace("37.6", "37.7") + "\n");
        assertTrue(diff.startsWith("line 2, column " + (line.indexOf("37.6") + 4) + ": the file has \"..."), diff);
        assertTrue(diff.contains("+37.6%</title></rect>\", the generator makes \"...") && diff.endsWith("+37.7%</title></rect>\""),
                diff);
        assertEquals("line 2: the file ends, the generator makes \"b\"", Figures.firstDifference("a", "a\nb"));
    }

    @Test
    void scaleTicksAndLabels() {
        Scale s = Scale.covering(0, 2.16, 6, 380, 120);
        assertEquals(0, s.lo());
        assertEquals(2.5, s.hi());
        assertEquals(List.of(0.0, 0.5, 1.0, 1.5, 2.0, 2.5), s.ticks());
        assertEquals("1.5", s.label(1.5));
        assertEquals(380, s.at(0));
        assertEquals(120, s.at(2.5));
        Scale neg = Scale.covering(-186, 0, 5, 390, 150);
        assertEquals(-200, neg.lo());
        assertEquals(0, neg.hi());
        assertEquals("-50", neg.label(-50));
        assertEquals(List.of("a b", "cc", "dddd", "ef"), Svg.wrap("a b cc ddddef", 4));
        assertEquals("61.2k", Figures.count(61_234));
        assertEquals("1.23M", Figures.count(1_234_000));
        assertEquals("950", Figures.count(950));
        assertEquals("200k", Figures.count(200_000));
        assertEquals("2M", Figures.count(2_000_000));
        assertEquals("7.48k", Figures.count(7_480));
        assertEquals("10.5M", Figures.count(10_500_000));
    }

    static Document svg(String text) throws Exception {
        DocumentBuilderFactory f = DocumentBuilderFactory.newInstance();
        f.setNamespaceAware(true);
        return f.newDocumentBuilder().parse(new ByteArrayInputStream(text.getBytes(StandardCharsets.UTF_8)));
    }

    static Element byId(Document d, String id) {
        Element e = byIdOrNull(d, id);
        assertNotNull(e, "no element with id " + id);
        return e;
    }

    static Element byIdOrNull(Document d, String id) {
        NodeList all = d.getElementsByTagNameNS("*", "*");
        for (int i = 0; i < all.getLength(); i++) {
            Element e = (Element) all.item(i);
            if (id.equals(e.getAttribute("id"))) {
                return e;
            }
        }
        return null;
    }

    static double num(Element e, String attribute) {
        return Double.parseDouble(e.getAttribute(attribute));
    }

    static List<String> texts(Document d) {
        NodeList all = d.getElementsByTagNameNS("*", "text");
        List<String> out = new java.util.ArrayList<>();
        for (int i = 0; i < all.getLength(); i++) {
            out.add(all.item(i).getTextContent());
        }
        return out;
    }
}
