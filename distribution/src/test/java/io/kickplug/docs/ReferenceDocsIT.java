package io.kickplug.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The committed docs/reference/commands.md and configuration.md are what the code declares now: generated again
 * from the distribution's bundle jars ({@code target/felix/bundle}) and compared. With
 * {@code -Dkickplug.docs.write=true} (what {@value ReferencePages#REGENERATE} passes) it writes them instead.
 */
class ReferenceDocsIT {

    private static ReferenceDocs.Pages pages;
    private static Path reference;

    @BeforeAll
    static void generate() throws IOException {
        Path felix = Path.of(System.getProperty("kickplug.felix.dir", "target/felix"));
        reference = Path.of(System.getProperty("kickplug.docs.dir", "../docs/reference"));
        pages = ReferenceDocs.generate(felix);
    }

    @Test
    void commandReferenceIsWhatTheCommandsDeclare() throws IOException {
        check("commands.md", pages.commands());
    }

    @Test
    void configurationReferenceIsWhatTheMetatypeDeclares() throws IOException {
        check("configuration.md", pages.configuration());
    }

    /** A new command must be given its place on the page (ReferencePages.GROUPS), not left under "Other". */
    @Test
    void everyCommandHasAGroup() {
        assertEquals(List.of(), pages.ungrouped(), "commands in no group of ReferencePages.GROUPS");
    }

    private static void check(String name, String generated) throws IOException {
        Path file = reference.resolve(name);
        if (Boolean.getBoolean("kickplug.docs.write")) {
            Files.createDirectories(reference);
            Files.writeString(file, generated, StandardCharsets.UTF_8);
            return;
        }
        String committed = Files.isRegularFile(file) ? Files.readString(file, StandardCharsets.UTF_8) : "";
        if (!committed.equals(generated)) {
            fail("docs/reference/" + name + " is not what the code declares now:\n  "
                    + String.join("\n  ", DocDiff.differences(committed, generated)) + "\nfirst difference at "
                    + DocDiff.firstDifference(committed, generated) + "\nRegenerate it with: "
                    + ReferencePages.REGENERATE + " (then review the change and commit it)");
        }
    }
}
