package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CommandIndexTest {

    private static final String SHELL = """
            <scr:component xmlns:scr="http://www.osgi.org/xmlns/scr/v1.3.0" name="io.kickplug.shell.KpCommands">
              <property name="osgi.command.scope" value="kp"/>
              <property name="osgi.command.function" type="String">attach
            detach</property>
              <service><provide interface="java.lang.Object"/></service>
              <implementation class="x.Kp"/>
            </scr:component>
            """;

    private static final String IO = """
            <scr:component xmlns:scr="http://www.osgi.org/xmlns/scr/v1.3.0" name="io.kickplug.shell.IoCommand">
              <property name="osgi.command.scope" value="kp"/>
              <property name="osgi.command.function" value="io"/>
              <service><provide interface="io.kickplug.shell.IoCommand"/></service>
              <reference name="guestWorkloads" interface="io.kickplug.api.guest.GuestWorkloads" cardinality="0..1"/>
              <implementation class="x.Io"/>
            </scr:component>
            """;

    @TempDir
    Path home;

    private Path bundles() throws IOException {
        Path dir = Files.createDirectories(home.resolve("bundle"));
        TestJars.write(dir.resolve("kickplug-shell.jar"), Map.of("Bundle-ManifestVersion", "2",
                "Bundle-SymbolicName", "io.kickplug.shell", "Service-Component", "OSGI-INF/kp.xml,OSGI-INF/io.xml"),
                Map.of("OSGI-INF/kp.xml", SHELL, "OSGI-INF/io.xml", IO));
        TestJars.bundle(dir, "kickplug-api.jar", "io.kickplug.api");
        TestJars.bundle(dir, "org.apache.felix.scr.jar", "org.apache.felix.scr");
        return dir;
    }

    @Test
    void theIndexGivesWhatTheDescriptionsSay() throws IOException {
        Path dir = bundles();
        CommandIndex.write(dir, home.resolve(CommandIndex.FILE));
        String text = Files.readString(home.resolve(CommandIndex.FILE));
        assertTrue(text.contains("kickplug-api.jar\t"), text);
        assertTrue(!text.contains("org.apache.felix.scr"), "only project bundles: " + text);
        CommandIndex index = CommandIndex.load(home);
        Path shell = dir.resolve("kickplug-shell.jar");
        assertEquals(CommandComponents.of(shell), index.of(shell));
        assertEquals(new CommandComponents.Descriptions(List.of(
                new CommandComponents.Command("io.kickplug.shell.KpCommands", "kp", List.of("attach", "detach")),
                new CommandComponents.Command("io.kickplug.shell.IoCommand", "kp", List.of("io"),
                        List.of("io.kickplug.api.guest.GuestWorkloads"))),
                Set.of("java.lang.Object", "io.kickplug.shell.IoCommand"),
                Set.of("io.kickplug.api.guest.GuestWorkloads")), index.of(shell));
        assertEquals(CommandComponents.Descriptions.NONE, index.of(dir.resolve("kickplug-api.jar")));
    }

    @Test
    void anEntryCountsOnlyForTheFileItWasMadeFrom() throws IOException {
        Path dir = bundles();
        Path shell = dir.resolve("kickplug-shell.jar");
        long size = Files.size(shell);
        long mtime = Files.getLastModifiedTime(shell).toMillis();
        // An index that says something else than the jar, for this very file: it is believed ...
        Files.writeString(home.resolve(CommandIndex.FILE), "# kickplug command index 2\n"
                + "kickplug-shell.jar\t" + size + "\t" + mtime + "\n"
                + "kickplug-shell.jar\t" + size + "\t" + mtime + "\tC\tother\tkp\tfio\t-\n"
                + "kickplug-shell.jar\t" + size + "\t" + mtime + "\tP\tx.A,x.B\n", StandardCharsets.UTF_8);
        assertEquals(new CommandComponents.Descriptions(List.of(new CommandComponents.Command("other", "kp",
                List.of("fio"))), Set.of("x.A", "x.B"), Set.of()), CommandIndex.load(home).of(shell));
        // ... until the jar is replaced (another modification time): then the jar's own descriptions count.
        Files.setLastModifiedTime(shell, FileTime.fromMillis(mtime - 60_000));
        assertEquals(CommandComponents.of(shell), CommandIndex.load(home).of(shell));
    }

    @Test
    void aMissingOrDamagedIndexReadsTheJars() throws IOException {
        Path shell = bundles().resolve("kickplug-shell.jar");
        assertEquals(CommandComponents.of(shell), CommandIndex.load(home).of(shell), "no index");
        Files.writeString(home.resolve(CommandIndex.FILE), "# kickplug command index 2\nkickplug-shell.jar\tx\t1\n");
        assertEquals(CommandComponents.of(shell), CommandIndex.load(home).of(shell), "bad number");
        Files.writeString(home.resolve(CommandIndex.FILE), "something else\n");
        assertEquals(CommandComponents.of(shell), CommandIndex.load(home).of(shell), "unknown header");
        String key = "kickplug-shell.jar\t" + Files.size(shell) + "\t" + Files.getLastModifiedTime(shell).toMillis();
        for (String bad : List.of(key + "\tC\tkp\tio\n", key + "\tX\ty\n", key + "\tP\t\n",
                key + "\tP\ta\n" + key + "\tP\tb\n")) {
            Files.writeString(home.resolve(CommandIndex.FILE), "# kickplug command index 2\n" + bad);
            assertEquals(CommandComponents.of(shell), CommandIndex.load(home).of(shell), bad);
        }
    }

    /**
     * An index made by a launcher before references and provided interfaces were indexed (format 1) is not used,
     * though it names this very jar: read as it was written, it would say the shell's commands reference nothing,
     * and a daemon would start the guest bundle only after statements that use kp:io.
     */
    @Test
    void anIndexOfTheFormerFormatIsNotUsed() throws IOException {
        Path shell = bundles().resolve("kickplug-shell.jar");
        String key = "kickplug-shell.jar\t" + Files.size(shell) + "\t" + Files.getLastModifiedTime(shell).toMillis();
        Files.writeString(home.resolve(CommandIndex.FILE), "# kickplug command index 1\n"
                + key + "\tio.kickplug.shell.KpCommands\tkp\tattach,detach,io\n", StandardCharsets.UTF_8);
        CommandComponents.Descriptions read = CommandIndex.load(home).of(shell);
        assertEquals(CommandComponents.of(shell), read);
        assertTrue(read.provides().contains("io.kickplug.shell.IoCommand"), read::toString);
    }
}
