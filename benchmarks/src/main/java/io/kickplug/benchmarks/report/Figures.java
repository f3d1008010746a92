package io.kickplug.benchmarks.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The figures of the documentation, drawn from the committed result files: every {@code RESULTS/NAME.json} gives
 * {@code FIGURES/NAME.svg} (and, for the seeds, {@code NAME-points.svg}), chosen by the file's {@code "benchmark"}
 * member. The same JSON always gives the same bytes. Plain JDK, no plotting library.
 *
 * <pre>
 * scripts/figures.sh                          (compiles this package with javac and runs it from the repo root)
 * java -cp CLASSES io.kickplug.benchmarks.report.Figures [--check] [RESULTS_DIR [FIGURES_DIR]]
 * </pre>
 *
 * Defaults: {@code docs/results} and {@code docs/figures}. {@code --check} writes nothing and exits 1 when a figure
 * is missing or differs from what the results give (the test {@code FiguresUpToDateTest} does the same in
 * {@code mvn verify}).
 */
public final class Figures {

    /** The command that regenerates every figure, as the check's failures say it. */
    public static final String REGENERATE = "scripts/figures.sh";

    private Figures() {
    }

    public static void main(String[] args) throws IOException {
        boolean check = false;
        List<String> dirs = new ArrayList<>();
        for (String a : args) {
            if (a.equals("--check")) {
                check = true;
            } else if (a.startsWith("-")) {
                System.err.println("usage: Figures [--check] [RESULTS_DIR [FIGURES_DIR]]");
                System.exit(2);
            } else {
                dirs.add(a);
            }
        }
        Path results = Path.of(dirs.size() > 0 ? dirs.get(0) : "docs/results");
        Path figures = Path.of(dirs.size() > 1 ? dirs.get(1) : "docs/figures");
        Map<String, String> made;
        try {
            made = figures(results);
        } catch (Json.JsonException | IllegalArgumentException e) {
            System.err.println("Figures: " + e.getMessage());
            System.exit(1);
            return;
        }
        if (check) {
            List<String> problems = check(made, figures);
            problems.forEach(System.err::println);
            System.exit(problems.isEmpty() ? 0 : 1);
        }
        Files.createDirectories(figures);
        for (Map.Entry<String, String> f : made.entrySet()) {
            Path out = figures.resolve(f.getKey());
            byte[] bytes = f.getValue().getBytes(StandardCharsets.UTF_8);
            boolean same = Files.exists(out) && java.util.Arrays.equals(Files.readAllBytes(out), bytes);
            if (!same) {
                Files.write(out, bytes);
            }
            System.out.println((same ? "unchanged " : "wrote     ") + out);
        }
    }

    /**
     * Every figure the result files in {@code results} give: file name to SVG text, in name order.
     *
     * @throws Json.JsonException naming the file and place of a malformed or incomplete result
     */
    public static Map<String, String> figures(Path results) throws IOException {
        Map<String, String> out = new TreeMap<>();
        List<Path> files;
        try (Stream<Path> list = Files.list(results)) {
            files = list.filter(f -> f.getFileName().toString().endsWith(".json")).sorted().toList();
        }
        for (Path file : files) {
            String name = file.getFileName().toString();
            String base = name.substring(0, name.length() - ".json".length());
            // The caption names the file as the repository does, whatever directory this ran from.
            String shown = "docs/results/" + name;
            Json.Value result = Json.read(file);
            String benchmark = result.get("benchmark").string();
            switch (benchmark) {
                case "VhostBench" -> out.put(base + ".svg", VhostFigure.draw(result, shown));
                case "kp:bench seeds" -> {
                    out.put(base + ".svg", SeedsFigure.effects(result, shown));
                    out.put(base + "-points.svg", SeedsFigure.points(result, shown));
                }
                default -> throw result.get("benchmark").fail("is \"" + benchmark + "\": no figure for it (known:"
                        + " VhostBench, kp:bench seeds)");
            }
        }
        return out;
    }

    /**
     * What differs between the figures {@code made} and the files in {@code figures}: one line per missing or
     * different file, naming it, the first differing line and the command that regenerates them; empty when all
     * match.
     */
    public static List<String> check(Map<String, String> made, Path figures) throws IOException {
        List<String> problems = new ArrayList<>();
        for (Map.Entry<String, String> f : made.entrySet()) {
            Path file = figures.resolve(f.getKey());
            if (!Files.exists(file)) {
                problems.add(file + " is missing; regenerate the figures with " + REGENERATE);
                continue;
            }
            String committed = Files.readString(file, StandardCharsets.UTF_8);
            if (!committed.equals(f.getValue())) {
                problems.add(file + " differs from what " + Figures.class.getSimpleName() + " makes of its result file"
                        + " (" + firstDifference(committed, f.getValue()) + "); regenerate the figures with "
                        + REGENERATE);
            }
        }
        return problems;
    }

    /** "line N, column C: the file has "...", the generator makes "..."", each from a little before the column. */
    static String firstDifference(String committed, String made) {
        String[] a = committed.split("\n", -1);
        String[] b = made.split("\n", -1);
        for (int i = 0; i < Math.max(a.length, b.length); i++) {
            String x = i < a.length ? a[i] : null;
            String y = i < b.length ? b[i] : null;
            if (x == null || y == null) {
                return "line " + (i + 1) + ": " + (x == null ? "the file ends, the generator makes " + excerpt(y, 0)
                        : "the file has " + excerpt(x, 0) + ", the generator's figure ends");
            }
            if (!x.equals(y)) {
                int col = 0;
                while (col < Math.min(x.length(), y.length()) && x.charAt(col) == y.charAt(col)) {
                    col++;
                }
                int from = Math.max(0, col - 30);
                return "line " + (i + 1) + ", column " + (col + 1) + ": the file has " + excerpt(x, from)
                        + ", the generator makes " + excerpt(y, from);
            }
        }
        return "same lines, different bytes";
    }

    private static String excerpt(String s, int from) {
        int to = Math.min(s.length(), from + 70);
        return "\"" + (from > 0 ? "..." : "") + s.substring(from, to) + (to < s.length() ? "..." : "") + "\"";
    }

    /** A count for a label: 950, 7.48k, 61.2k, 200k, 1.23M, 2M (no trailing zeros after the point). */
    static String count(double v) {
        double a = Math.abs(v);
        String s;
        if (a >= 1e6) {
            s = String.format(Locale.ROOT, "%.2f", v / 1e6) + "M";
        } else if (a >= 1e4) {
            s = String.format(Locale.ROOT, "%.1f", v / 1e3) + "k";
        } else if (a >= 1e3) {
            s = String.format(Locale.ROOT, "%.2f", v / 1e3) + "k";
        } else {
            return String.format(Locale.ROOT, "%.0f", v);
        }
        return s.replaceAll("\\.?0+([kM])$", "$1");
    }
}
