package io.kickplug.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MarkdownDocsTest {

    @TempDir
    Path dir;

    private Path page(String text) throws Exception {
        return Files.writeString(dir.resolve("p.md"), text);
    }

    @Test
    void aMarkedBlockIsTakenWithItsLineAndAnUnmarkedOneIsNot() throws Exception {
        Path p = page("# T\n\n```sh\nnot me\n```\n<!-- runnable -->\n```sh\necho a\necho b\n```\n"
                + "<!-- runnable: slow -->\n~~~\nlong\n~~~\n");
        List<MarkdownDocs.Block> blocks = MarkdownDocs.blocks(p);
        assertEquals(2, blocks.size());
        assertEquals("echo a\necho b\n", blocks.get(0).script());
        assertEquals(7, blocks.get(0).line());
        assertFalse(blocks.get(0).slow());
        assertEquals("long\n", blocks.get(1).script());
        assertTrue(blocks.get(1).slow());
    }

    @Test
    void aMarkerWithoutAFenceOrAnUnclosedFenceIsAnErrorNamingTheLine() throws Exception {
        Path p = page("text\n<!-- runnable -->\nnot a fence\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> MarkdownDocs.blocks(p));
        assertTrue(e.getMessage().contains("p.md:2"), e.getMessage());
        Path q = page("<!-- runnable -->\n```sh\necho\n");
        assertThrows(IllegalArgumentException.class, () -> MarkdownDocs.blocks(q));
    }

    @Test
    void slugsFollowGithubsRule() {
        assertEquals("workloads-kpio-and-kpfio", MarkdownDocs.slug("Workloads: kp:io and kp:fio"));
        assertEquals("the-file-backends-hand-off", MarkdownDocs.slug("The file backend's hand-off"));
        assertEquals("the-seeds-on-a-real-linux-guest---real-guest",
                MarkdownDocs.slug("The seeds on a real Linux guest (`--real-guest`)"));
        assertEquals("see-docs", MarkdownDocs.slug("See [docs](docs/README.md)"));
    }

    @Test
    void repeatedHeadingsGetNumberedAnchorsAndFencedLinesAreNoHeadings() throws Exception {
        Path p = page("# A\n## A\n```\n# not a heading\n```\n## B\n");
        assertEquals(Set.of("a", "a-1", "b"), MarkdownDocs.anchors(p));
    }

    @Test
    void linksAreSplitIntoTargetAndAnchorAndCodeAndWebLinksAreSkipped() throws Exception {
        Path p = page("[a](x.md#sec) [b](#local) [c](https://e.org/x) `[d](y.md)`\n```\n[e](z.md)\n```\n");
        List<MarkdownDocs.Link> links = MarkdownDocs.links(p);
        assertEquals(2, links.size());
        assertEquals("x.md", links.get(0).target());
        assertEquals("sec", links.get(0).anchor());
        assertEquals("", links.get(1).target());
        assertEquals("local", links.get(1).anchor());
    }
}
