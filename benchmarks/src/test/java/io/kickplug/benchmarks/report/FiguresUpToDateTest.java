package io.kickplug.benchmarks.report;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The committed figures ({@code docs/figures/*.svg}) are what the report code makes of the committed results
 * ({@code docs/results/*.json}): a changed result or a changed generator without regenerated figures fails here,
 * naming the file and {@link Figures#REGENERATE}.
 */
class FiguresUpToDateTest {

    @Test
    void committedFiguresMatchTheCommittedResults() throws Exception {
        Path docs = Path.of(System.getProperty("kickplug.docs", "../docs")).toAbsolutePath().normalize();
        Path results = docs.resolve("results");
        assertTrue(Files.isDirectory(results), "no result files at " + results.toAbsolutePath());
        Map<String, String> made = Figures.figures(results);
        assertTrue(made.size() >= 3, "figures of the vhost-user and the seeds results: " + made.keySet());
        List<String> problems = Figures.check(made, docs.resolve("figures"));
        assertEquals(List.of(), problems, String.join("\n", problems));
    }
}
