package io.kickplug.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/**
 * The pages a newcomer reads hold together: every relative link of README.md and docs/ reaches a file that exists
 * and, when it names an anchor, a heading of that file; the front page stays a front page; history stays in git.
 */
class DocsLinksTest {

    private final Path root = MarkdownDocs.root();

    @Test
    void everyRelativeLinkAndAnchorResolves() throws Exception {
        List<String> broken = new ArrayList<>();
        for (Path page : MarkdownDocs.pages(root)) {
            for (MarkdownDocs.Link link : MarkdownDocs.links(page)) {
                Path target = link.target().isEmpty() ? page : page.getParent().resolve(link.target()).normalize();
                String where = root.relativize(page) + ":" + link.line() + ": ";
                if (!Files.exists(target)) {
                    broken.add(where + link.target() + " does not exist");
                } else if (!link.anchor().isEmpty() && target.toString().endsWith(".md")
                        && !MarkdownDocs.anchors(target).contains(link.anchor())) {
                    broken.add(where + link.target() + "#" + link.anchor() + ": no such heading");
                }
            }
        }
        assertEquals(List.of(), broken, "broken links in the docs");
    }

    @Test
    void theFrontPageIsAtMost300LinesAndHasTheQuickStart() throws Exception {
        List<String> readme = Files.readAllLines(root.resolve("README.md"));
        assertTrue(readme.size() <= 300, "README.md has " + readme.size() + " lines; guides and figures go to docs/");
        assertTrue(readme.stream().anyMatch(l -> l.matches("#+ Quick start")), "README.md has no Quick start");
        assertTrue(readme.stream().anyMatch(l -> l.startsWith("mvn -B verify")), "README.md does not give the test command");
    }

    @Test
    void noPageNamesAnIssueNumber() throws Exception {
        Pattern issue = Pattern.compile("\\b[Ii]ssues? #?[0-9]+\\b");
        List<String> hits = new ArrayList<>();
        for (Path page : MarkdownDocs.pages(root)) {
            List<String> lines = Files.readAllLines(page);
            for (int i = 0; i < lines.size(); i++) {
                if (issue.matcher(lines.get(i)).find()) {
                    hits.add(root.relativize(page) + ":" + (i + 1) + ": " + lines.get(i).strip());
                }
            }
        }
        assertEquals(List.of(), hits, "say what a thing is and does; its history belongs in git");
    }
}
