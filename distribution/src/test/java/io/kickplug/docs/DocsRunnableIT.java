package io.kickplug.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Runs every shell block that README.md and docs/ mark {@code <!-- runnable -->}, as a reader would: with bash
 * ({@code -e -o pipefail}) from the repository root, after the build made {@code distribution/target/kickplug.jar}.
 * A block passes when it exits 0 within its time. Blocks marked {@code runnable: slow} run with
 * {@code -Dkickplug.docs.slow=true}. Each block's output is kept in {@code target/docs-runs/}.
 */
class DocsRunnableIT {

    private static final long TIMEOUT_SECONDS = Long.getLong("kickplug.docs.timeout", 300);
    private static final boolean SLOW = Boolean.getBoolean("kickplug.docs.slow");

    private final Path root = MarkdownDocs.root();

    @TestFactory
    Stream<DynamicTest> runnableBlocks() throws IOException {
        assertTrue(Files.isRegularFile(root.resolve("distribution/target/kickplug.jar")),
                "the blocks need the built distribution/target/kickplug.jar");
        List<MarkdownDocs.Block> blocks = new ArrayList<>();
        for (Path page : MarkdownDocs.pages(root)) {
            blocks.addAll(MarkdownDocs.blocks(page));
        }
        assertTrue(blocks.stream().filter(b -> b.page().endsWith("README.md")).count() >= 3,
                "the front page's tour marks its blocks runnable");
        return blocks.stream().filter(b -> SLOW || !b.slow())
                .map(b -> DynamicTest.dynamicTest(root.relativize(b.page()) + ":" + b.line(), () -> run(b)));
    }

    private void run(MarkdownDocs.Block block) throws Exception {
        Path logs = Files.createDirectories(root.resolve("distribution/target/docs-runs"));
        Path state = Files.createTempDirectory(logs, "state-");
        Path log = logs.resolve(block.page().getFileName() + "-" + block.line() + ".log");
        ProcessBuilder pb = new ProcessBuilder("bash", "-e", "-o", "pipefail", "-c", block.script())
                .directory(root.toFile()).redirectErrorStream(true).redirectOutput(log.toFile());
        // A daemon's bundle cache goes to a folder of this run, not the user's ~/.local/state.
        pb.environment().put("XDG_STATE_HOME", state.toString());
        Process process = pb.start();
        // Every process the block starts, seen while it runs: one it leaves behind (a daemon it did not stop)
        // would be re-parented when the block ends, and would hold its sockets for the next block.
        Set<ProcessHandle> started = new HashSet<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(TIMEOUT_SECONDS);
        boolean ended;
        do {
            process.descendants().forEach(started::add);
            ended = process.waitFor(100, TimeUnit.MILLISECONDS);
        } while (!ended && System.nanoTime() < deadline);
        if (!ended) {
            process.descendants().forEach(started::add);
            process.destroyForcibly().waitFor();
        }
        List<ProcessHandle> leftOver = started.stream().filter(ProcessHandle::isAlive).toList();
        leftOver.forEach(ProcessHandle::destroyForcibly);
        String output = Files.readString(log, StandardCharsets.UTF_8);
        String tail = output.length() > 4000 ? "..." + output.substring(output.length() - 4000) : output;
        assertTrue(ended, () -> block + " did not end within " + TIMEOUT_SECONDS + " s; output:\n" + tail);
        assertEquals(0, process.exitValue(), () -> block + " exited " + process.exitValue() + "; output:\n" + tail);
        assertEquals(List.of(), leftOver.stream().map(h -> h.info().commandLine().orElse("pid " + h.pid())).toList(),
                () -> block + " left processes running");
    }
}
