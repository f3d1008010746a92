package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The bundle facts kept in a state folder: what they say, and that they are never used for other jars. */
class BundleFactsTest {

    @TempDir
    Path tmp;

    private Path dist;
    private Path file;
    private BundleSet.Contents contents;
    private Map<Path, CommandComponents.Descriptions> commands;

    @BeforeEach
    void bundles() throws Exception {
        dist = Files.createDirectories(tmp.resolve("bundle"));
        TestJars.bundle(dist, "api.jar", "io.kickplug.api");
        TestJars.bundle(dist, "shell.jar", "io.kickplug.shell");
        TestJars.write(dist.resolve("scr.jar"), Map.of("Bundle-ManifestVersion", "2",
                "Bundle-SymbolicName", "org.apache.felix.scr;singleton:=true", "Bundle-Version", "2.2.18"), Map.of());
        TestJars.write(dist.resolve("plain.jar"), Map.of(), Map.of());
        contents = BundleSet.scan(dist);
        commands = Map.of(dist.resolve("shell.jar"), new CommandComponents.Descriptions(List.of(
                new CommandComponents.Command("io.kickplug.shell.KpCommands", "kp", List.of("attach", "disks")),
                new CommandComponents.Command("io.kickplug.shell.IoCommand", "kp", List.of("io"),
                        List.of("io.kickplug.api.guest.GuestWorkloads", "io.kickplug.api.blk.DiskManager"))),
                Set.of("io.kickplug.shell.KpCommands", "io.kickplug.shell.IoCommand"),
                Set.of("io.kickplug.api.guest.GuestWorkloads", "io.kickplug.api.blk.DiskManager")));
        file = tmp.resolve("bundles.txt");
    }

    private BundleFacts.Facts roundTrip() throws IOException {
        Files.writeString(file, BundleFacts.format(contents, commands), StandardCharsets.UTF_8);
        return BundleFacts.read(file, dist, BundleFacts.list(dist));
    }

    @Test
    void whatIsReadBackIsWhatTheJarsSay() throws Exception {
        BundleFacts.Facts facts = roundTrip();
        assertNotNull(facts);
        assertEquals(contents, facts.contents(), "the same bundles in the same start order, and the same non-bundles");
        assertEquals(commands, facts.descriptions());
        assertEquals(List.of("org.apache.felix.scr", "io.kickplug.api", "io.kickplug.shell"),
                facts.contents().bundles().stream().map(BundleSet.Jar::symbolicName).toList());
    }

    @Test
    void listNamesEveryJarSortedWithoutOpeningThem() throws Exception {
        Files.writeString(dist.resolve("broken.jar"), "not a zip");
        Files.writeString(dist.resolve("notes.txt"), "x");
        List<String> names = new ArrayList<>();
        for (Path p : BundleFacts.list(dist)) {
            names.add(p.getFileName().toString());
        }
        assertEquals(List.of("api.jar", "broken.jar", "plain.jar", "scr.jar", "shell.jar"), names);
        assertThrows(IOException.class, () -> BundleFacts.list(tmp.resolve("missing")));
    }

    @Test
    void factsOfOtherJarsAreNotUsed() throws Exception {
        assertNotNull(roundTrip());
        TestJars.bundle(dist, "extra.jar", "io.kickplug.extra");
        assertNull(BundleFacts.read(file, dist, BundleFacts.list(dist)), "a jar the facts do not name");
        Files.delete(dist.resolve("extra.jar"));
        Files.delete(dist.resolve("api.jar"));
        assertNull(BundleFacts.read(file, dist, BundleFacts.list(dist)), "a jar the facts name is gone");
    }

    @Test
    void aDamagedOrMissingFileIsNotUsed() throws Exception {
        List<Path> jars = BundleFacts.list(dist);
        assertNull(BundleFacts.read(tmp.resolve("none.txt"), dist, jars));
        String good = BundleFacts.format(contents, commands);
        for (String bad : List.of("", "# another format\n", good.replace("\t0\n", "\t2\n"),
                good + "X\tsomething\n", good + "C\tplain.jar\tc\tkp\tf\t-\n", good + "B\tapi.jar\tagain\t1\t0\n",
                good + "C\tapi.jar\tc\tkp\tf\n", good + "C\tapi.jar\tc\tkp\tf\t\n", good + "P\tapi.jar\t\n",
                good + "P\tshell.jar\tx.Again\n", good + "R\tplain.jar\tx.Y\n",
                good.substring(0, good.indexOf("\nB\t", good.indexOf("\nB\t") + 1) + 1))) {
            Files.writeString(file, bad, StandardCharsets.UTF_8);
            assertNull(BundleFacts.read(file, dist, jars), bad);
        }
    }

    /**
     * Facts kept by a launcher before references and provided interfaces were kept (format 1) are not used, even
     * in a state folder whose record says they describe these very jars: read as they were written, they would
     * say the shell's commands reference nothing, and a daemon would start the guest bundle only after
     * statements that use kp:io. The launcher reads the jars again and keeps new facts.
     */
    @Test
    void factsOfTheFormerFormatAreNotUsed() throws Exception {
        String current = BundleFacts.format(contents, commands);
        StringBuilder former = new StringBuilder("# kickplug bundle facts 1\n");
        for (String line : current.lines().skip(1).toList()) {
            if (line.startsWith("B\t") || line.startsWith("N\t")) {
                former.append(line).append('\n');
            } else if (line.startsWith("C\t")) {
                former.append(line, 0, line.lastIndexOf('\t')).append('\n'); // no references in format 1
            }
        }
        Files.writeString(file, former, StandardCharsets.UTF_8);
        assertNull(BundleFacts.read(file, dist, BundleFacts.list(dist)), former::toString);
        assertTrue(current.startsWith("# kickplug bundle facts " + BundleFacts.VERSION + "\n"), current);
    }

    @Test
    void aFactThatCannotBeWrittenIsRefused() {
        BundleSet.Contents tabbed = new BundleSet.Contents(
                List.of(new BundleSet.Jar(dist.resolve("api.jar"), "io.kickplug.api", "1.0\t0", false)), List.of());
        assertThrows(IOException.class, () -> BundleFacts.format(tabbed, Map.of()));
    }

    @Test
    void theStateFolderKeepsTheFactsOnlyWithItsRecord() throws Exception {
        Path dir = tmp.resolve("state");
        List<Path> jars = BundleFacts.list(dist);
        StateDir first = StateDir.open(dir, jars);
        assertFalse(first.reusable());
        Files.createDirectories(first.felixStorage());
        first.installed(BundleFacts.format(contents, commands));
        first.close();
        StateDir second = StateDir.open(dir, jars);
        assertTrue(second.reusable());
        assertNotNull(BundleFacts.read(second.facts(), dist, jars));
        second.close();
        // A jar rebuilt: the cache is made again, and the old facts are gone before the new record is written.
        Files.writeString(dist.resolve("plain.jar"), "rebuilt, longer than before");
        StateDir third = StateDir.open(dir, jars);
        assertFalse(third.reusable());
        third.installed(null);
        assertFalse(Files.exists(third.facts()), "no facts of the jars before");
        third.close();
    }
}
