package io.kickplug.docs;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The project's Markdown pages as the docs tests read them: README.md and every page under docs/, their runnable
 * shell blocks, their relative links and their headings' anchors (GitHub's rule).
 */
final class MarkdownDocs {

    /** A shell block a page marks as runnable: {@code <!-- runnable -->} (or {@code runnable: slow}) before a fence. */
    record Block(Path page, int line, boolean slow, String script) {
        @Override
        public String toString() {
            return page.getFileName() + ":" + line;
        }
    }

    /** A relative link of a page: the target path (maybe empty: the page itself) and the anchor (maybe empty). */
    record Link(Path page, int line, String target, String anchor) {
    }

    private static final Pattern MARKER = Pattern.compile("^<!--\\s*runnable(:\\s*slow)?\\s*-->\\s*$");
    private static final Pattern FENCE = Pattern.compile("^(```+|~~~+)(.*)$");
    private static final Pattern LINK = Pattern.compile("\\]\\(([^)\\s]+)\\)");
    private static final Pattern HEADING = Pattern.compile("^(#{1,6})\\s+(.*?)\\s*#*\\s*$");

    private MarkdownDocs() {
    }

    /** README.md of {@code root} and every {@code .md} under {@code root/docs}, in a stable order. */
    static List<Path> pages(Path root) throws IOException {
        List<Path> pages = new ArrayList<>();
        pages.add(root.resolve("README.md"));
        try (Stream<Path> files = Files.walk(root.resolve("docs"))) {
            files.filter(p -> p.toString().endsWith(".md")).sorted().forEach(pages::add);
        }
        return pages;
    }

    /** The repository root: the folder above this module (tests run in the module's folder). */
    static Path root() {
        Path module = Path.of("").toAbsolutePath();
        Path root = module.getParent();
        if (root == null || !Files.isRegularFile(root.resolve("README.md"))) {
            throw new IllegalStateException("no README.md above " + module);
        }
        return root;
    }

    /** The runnable blocks of a page. A marker not followed by a fenced block is an error naming its line. */
    static List<Block> blocks(Path page) throws IOException {
        List<String> lines = Files.readAllLines(page, StandardCharsets.UTF_8);
        List<Block> out = new ArrayList<>();
        for (int i = 0; i < lines.size(); i++) {
            Matcher marker = MARKER.matcher(lines.get(i));
            if (!marker.matches()) {
                continue;
            }
            int open = i + 1;
            Matcher fence = open < lines.size() ? FENCE.matcher(lines.get(open)) : null;
            if (fence == null || !fence.matches()) {
                throw new IllegalArgumentException(page + ":" + (i + 1) + ": a runnable marker must be followed by a fenced block");
            }
            String closing = fence.group(1);
            StringBuilder script = new StringBuilder();
            int j = open + 1;
            while (j < lines.size() && !lines.get(j).startsWith(closing)) {
                script.append(lines.get(j)).append('\n');
                j++;
            }
            if (j == lines.size()) {
                throw new IllegalArgumentException(page + ":" + (open + 1) + ": the fenced block is not closed");
            }
            out.add(new Block(page, open + 1, marker.group(1) != null, script.toString()));
            i = j;
        }
        return out;
    }

    /** The relative links of a page outside fenced blocks and code spans (web addresses are not checked). */
    static List<Link> links(Path page) throws IOException {
        List<Link> out = new ArrayList<>();
        List<String> lines = Files.readAllLines(page, StandardCharsets.UTF_8);
        boolean inFence = false;
        for (int i = 0; i < lines.size(); i++) {
            String line = lines.get(i);
            if (FENCE.matcher(line).matches()) {
                inFence = !inFence;
                continue;
            }
            if (inFence) {
                continue;
            }
            Matcher m = LINK.matcher(withoutCodeSpans(line));
            while (m.find()) {
                String href = m.group(1);
                if (href.contains("://") || href.startsWith("mailto:")) {
                    continue;
                }
                int hash = href.indexOf('#');
                String target = hash < 0 ? href : href.substring(0, hash);
                String anchor = hash < 0 ? "" : href.substring(hash + 1);
                out.add(new Link(page, i + 1, target, anchor));
            }
        }
        return out;
    }

    /** The anchors of a page's headings, as GitHub makes them (repeated headings get -1, -2, ...). */
    static Set<String> anchors(Path page) throws IOException {
        Set<String> out = new LinkedHashSet<>();
        boolean inFence = false;
        for (String line : Files.readAllLines(page, StandardCharsets.UTF_8)) {
            if (FENCE.matcher(line).matches()) {
                inFence = !inFence;
                continue;
            }
            Matcher m = HEADING.matcher(line);
            if (inFence || !m.matches()) {
                continue;
            }
            String base = slug(m.group(2));
            String anchor = base;
            for (int n = 1; !out.add(anchor); n++) {
                anchor = base + "-" + n;
            }
        }
        return out;
    }

    /**
     * GitHub's heading anchor: lower case, markup and punctuation dropped (letters, digits, '-', '_' and spaces
     * kept), each space a '-'.
     */
    static String slug(String heading) {
        String text = heading.replaceAll("\\[([^\\]]*)\\]\\([^)]*\\)", "$1").toLowerCase(Locale.ROOT);
        StringBuilder out = new StringBuilder();
        text.codePoints().forEach(c -> {
            if (Character.isLetterOrDigit(c) || c == '-' || c == '_') {
                out.appendCodePoint(c);
            } else if (c == ' ') {
                out.append('-');
            }
        });
        return out.toString();
    }

    private static String withoutCodeSpans(String line) {
        return line.replaceAll("`[^`]*`", "``");
    }
}
