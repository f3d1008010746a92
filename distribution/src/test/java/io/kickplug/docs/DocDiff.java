package io.kickplug.docs;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What differs between a committed generated page and the page the code makes now, named as a reader looks for it:
 * the section (a command such as {@code kp:attach}, or a PID) and in it the table rows (an option, an operand, an
 * attribute) or the text that changed.
 */
final class DocDiff {

    private DocDiff() {
    }

    /** One line per differing section, e.g. {@code "kp:attach: option --backend"}; empty when the pages are equal. */
    static List<String> differences(String committed, String now) {
        Map<String, List<String>> before = sections(committed);
        Map<String, List<String>> after = sections(now);
        Set<String> keys = new LinkedHashSet<>(after.keySet());
        keys.addAll(before.keySet());
        List<String> out = new ArrayList<>();
        for (String key : keys) {
            List<String> b = before.get(key);
            List<String> a = after.get(key);
            if (b == null) {
                out.add(key + ": new (not in the committed page)");
            } else if (a == null) {
                out.add(key + ": gone (the code no longer declares it)");
            } else if (!a.equals(b)) {
                Set<String> what = new LinkedHashSet<>();
                what.addAll(labels(a, b));
                what.addAll(labels(b, a));
                out.add(key + ": " + String.join(", ", what));
            }
        }
        return out;
    }

    /** The first line that differs, committed and now, to show beside the list. */
    static String firstDifference(String committed, String now) {
        String[] b = committed.split("\n", -1);
        String[] a = now.split("\n", -1);
        for (int i = 0; i < Math.max(a.length, b.length); i++) {
            String x = i < b.length ? b[i] : "(end of page)";
            String y = i < a.length ? a[i] : "(end of page)";
            if (!x.equals(y)) {
                return "line " + (i + 1) + "\n  committed: " + x + "\n  now:       " + y;
            }
        }
        return "none";
    }

    /** Sections by heading (without its #s); the lines above the first heading are "(top of the page)". */
    static Map<String, List<String>> sections(String page) {
        Map<String, List<String>> out = new LinkedHashMap<>();
        String key = "(top of the page)";
        out.put(key, new ArrayList<>());
        for (String line : page.split("\n", -1)) {
            if (line.startsWith("#")) {
                key = line.replaceFirst("^#+\\s*", "");
                out.putIfAbsent(key, new ArrayList<>());
            }
            out.get(key).add(line);
        }
        return out;
    }

    /** What the lines of {@code lines} that {@code other} lacks are: "option --x", "attribute y", "text". */
    private static List<String> labels(List<String> lines, List<String> other) {
        List<String> rest = new ArrayList<>(other);
        List<String> out = new ArrayList<>();
        String header = "text";
        for (String line : lines) {
            boolean row = line.startsWith("| ");
            if (row && !line.startsWith("|---")) {
                String first = firstCell(line);
                if (isHeader(line, lines)) {
                    header = first;
                }
            }
            if (!line.startsWith("|")) {
                header = "text";
            }
            if (!rest.remove(line)) {
                String label = row && !line.startsWith("|---") && !header.equals(firstCell(line))
                        ? header + " " + plain(firstCell(line)) : "text";
                if (!out.contains(label)) {
                    out.add(label);
                }
            }
        }
        return out;
    }

    /** A cell without its Markdown: {@code [kp:disks](#kpdisks)} is kp:disks, {@code `--json`} is --json. */
    static String plain(String cell) {
        return cell.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").replace("`", "").replace("\\|", "|");
    }

    private static boolean isHeader(String line, List<String> lines) {
        int i = lines.indexOf(line);
        return i >= 0 && i + 1 < lines.size() && lines.get(i + 1).startsWith("|---");
    }

    private static String firstCell(String row) {
        String inner = row.substring(1);
        int end = inner.indexOf(" |");
        while (end > 0 && inner.charAt(end - 1) == '\\') {
            end = inner.indexOf(" |", end + 1);
        }
        return (end < 0 ? inner : inner.substring(0, end)).strip();
    }
}
