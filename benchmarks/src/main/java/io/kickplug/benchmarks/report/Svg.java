package io.kickplug.benchmarks.report;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A small SVG writer for the figures: rectangles, lines, circles and text, coordinates with one decimal, every number
 * formatted with {@link Locale#ROOT}, so the same input gives the same bytes on every machine. Elements carry an
 * {@code id} where a test or a reader needs to find them, and a {@code <title>} (a tooltip) with the exact value.
 */
final class Svg {

    static final String FONT = "DejaVu Sans, Arial, Helvetica, sans-serif";
    static final String MONO = "DejaVu Sans Mono, Menlo, Consolas, monospace";

    private final StringBuilder body = new StringBuilder();

    /** A number as an attribute value: one decimal, no "-0.0". */
    static String n(double v) {
        String s = String.format(Locale.ROOT, "%.1f", v);
        return s.equals("-0.0") ? "0.0" : s;
    }

    /** Text for element content and attribute values: &lt; &gt; &amp; &quot; escaped. */
    static String esc(String s) {
        StringBuilder out = new StringBuilder(s.length());
        for (int i = 0; i < s.length(); i++) {
            char c = s.charAt(i);
            switch (c) {
                case '<' -> out.append("&lt;");
                case '>' -> out.append("&gt;");
                case '&' -> out.append("&amp;");
                case '"' -> out.append("&quot;");
                default -> out.append(c < 0x20 ? ' ' : c);
            }
        }
        return out.toString();
    }

    /** A rectangle; {@code id} and {@code tooltip} may be null. A negative height or width is drawn from the far side. */
    Svg rect(double x, double y, double w, double h, String fill, String stroke, String id, String tooltip) {
        if (w < 0) {
            x += w;
            w = -w;
        }
        if (h < 0) {
            y += h;
            h = -h;
        }
        body.append("<rect");
        if (id != null) {
            body.append(" id=\"").append(esc(id)).append('"');
        }
        body.append(" x=\"").append(n(x)).append("\" y=\"").append(n(y)).append("\" width=\"").append(n(w))
                .append("\" height=\"").append(n(h)).append("\" fill=\"").append(fill).append('"');
        if (stroke != null) {
            body.append(" stroke=\"").append(stroke).append('"');
        }
        return tooltip(tooltip, "rect");
    }

    Svg line(double x1, double y1, double x2, double y2, String stroke, double width, String dash, String id) {
        body.append("<line");
        if (id != null) {
            body.append(" id=\"").append(esc(id)).append('"');
        }
        body.append(" x1=\"").append(n(x1)).append("\" y1=\"").append(n(y1)).append("\" x2=\"").append(n(x2))
                .append("\" y2=\"").append(n(y2)).append("\" stroke=\"").append(stroke).append("\" stroke-width=\"")
                .append(n(width)).append('"');
        if (dash != null) {
            body.append(" stroke-dasharray=\"").append(dash).append('"');
        }
        body.append("/>\n");
        return this;
    }

    Svg circle(double cx, double cy, double r, String fill, String id, String tooltip) {
        body.append("<circle");
        if (id != null) {
            body.append(" id=\"").append(esc(id)).append('"');
        }
        body.append(" cx=\"").append(n(cx)).append("\" cy=\"").append(n(cy)).append("\" r=\"").append(n(r))
                .append("\" fill=\"").append(fill).append('"');
        return tooltip(tooltip, "circle");
    }

    /** A filled polygon through {@code xy} (x0, y0, x1, y1, ...). */
    Svg polygon(double[] xy, String fill, String id, String tooltip) {
        body.append("<polygon");
        if (id != null) {
            body.append(" id=\"").append(esc(id)).append('"');
        }
        body.append(" points=\"");
        for (int i = 0; i < xy.length; i += 2) {
            body.append(i == 0 ? "" : " ").append(n(xy[i])).append(',').append(n(xy[i + 1]));
        }
        body.append("\" fill=\"").append(fill).append('"');
        return tooltip(tooltip, "polygon");
    }

    /**
     * Text at ({@code x}, {@code y}) (the baseline).
     *
     * @param anchor "start", "middle" or "end"
     * @param style extra attributes, e.g. {@code font-weight="bold"}, or ""
     */
    Svg text(double x, double y, String text, String anchor, double size, String fill, String style) {
        body.append("<text x=\"").append(n(x)).append("\" y=\"").append(n(y)).append('"');
        if (!anchor.equals("start")) {
            body.append(" text-anchor=\"").append(anchor).append('"');
        }
        body.append(" font-size=\"").append(n(size)).append("\" fill=\"").append(fill).append('"');
        if (!style.isEmpty()) {
            body.append(' ').append(style);
        }
        body.append('>').append(esc(text)).append("</text>\n");
        return this;
    }

    /** Raw markup (a group's start or end). */
    Svg raw(String markup) {
        body.append(markup);
        return this;
    }

    private Svg tooltip(String tooltip, String element) {
        if (tooltip == null) {
            body.append("/>\n");
        } else {
            body.append("><title>").append(esc(tooltip)).append("</title></").append(element).append(">\n");
        }
        return this;
    }

    /** The document: a white background, {@code title} as its accessible name, then the elements drawn. */
    String document(double width, double height, String title) {
        return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                + "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + n(width) + "\" height=\"" + n(height)
                + "\" viewBox=\"0 0 " + n(width) + " " + n(height) + "\" font-family=\"" + FONT + "\" role=\"img\">\n"
                + "<title>" + esc(title) + "</title>\n"
                + "<rect x=\"0\" y=\"0\" width=\"" + n(width) + "\" height=\"" + n(height) + "\" fill=\"#ffffff\"/>\n"
                + body + "</svg>\n";
    }

    /** {@code text} broken at spaces into lines of at most {@code width} characters (a longer word on its own). */
    static List<String> wrap(String text, int width) {
        List<String> lines = new ArrayList<>();
        StringBuilder line = new StringBuilder();
        for (String word : text.split(" ")) {
            if (word.isEmpty()) {
                continue;
            }
            if (line.length() > 0 && line.length() + 1 + word.length() > width) {
                lines.add(line.toString());
                line.setLength(0);
            }
            while (word.length() > width) {
                if (line.length() > 0) {
                    lines.add(line.toString());
                    line.setLength(0);
                }
                lines.add(word.substring(0, width));
                word = word.substring(width);
            }
            if (line.length() > 0) {
                line.append(' ');
            }
            line.append(word);
        }
        if (line.length() > 0 || lines.isEmpty()) {
            lines.add(line.toString());
        }
        return lines;
    }

    /**
     * The caption every figure ends with, from the result file's provenance: command, machine, date and commit, and
     * the regenerate command. Drawn from {@code top}; returns the y below it.
     */
    static double caption(Svg svg, double x, double top, double width, Provenance p, String resultFile) {
        double y = top;
        int chars = (int) (width / 6.7);
        svg.line(x, y, x + width, y, "#bbbbbb", 1, null, null);
        y += 16;
        boolean firstLine = true;
        for (String line : wrap("$ " + p.command(), chars)) {
            svg.text(x + (firstLine ? 0 : 14), y, line, "start", 11, "#333333", "font-family=\"" + MONO + "\"");
            firstLine = false;
            y += 14;
        }
        for (String line : wrap("Machine: " + p.machineLine(), (int) (width / 6.0))) {
            svg.text(x, y, line, "start", 11, "#333333", "");
            y += 14;
        }
        String date = "Run " + p.date() + ", commit " + p.gitCommit() + ". Data: " + resultFile
                + "; figure: scripts/figures.sh";
        for (String line : wrap(date, (int) (width / 6.0))) {
            svg.text(x, y, line, "start", 11, "#333333", "");
            y += 14;
        }
        return y;
    }
}
