package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CommandComponentsTest {

    /** As bnd writes a component with a multi-valued function property. */
    private static final String COMMANDS = """
            <?xml version="1.0" encoding="UTF-8"?>
            <scr:component xmlns:scr="http://www.osgi.org/xmlns/scr/v1.5.0" name="io.kickplug.shell.DiskCommands">
              <property name="osgi.command.scope" type="String" value="kp"/>
              <property name="osgi.command.function" type="String">attach
            detach
            disks
            io</property>
              <service>
                <provide interface="io.kickplug.shell.DiskCommands"/>
              </service>
              <implementation class="io.kickplug.shell.DiskCommands"/>
            </scr:component>
            """;

    /** A command component with references, and a component that provides services, in one document. */
    private static final String WITH_REFERENCES = """
            <?xml version="1.0" encoding="UTF-8"?>
            <components xmlns:scr="http://www.osgi.org/xmlns/scr/v1.4.0">
              <scr:component name="io.kickplug.shell.IoCommand">
                <property name="osgi.command.scope" type="String" value="kp"/>
                <property name="osgi.command.function" type="String" value="io"/>
                <service><provide interface="io.kickplug.shell.IoCommand"/></service>
                <reference name="guestWorkloads" cardinality="0..1" policy="dynamic"
                    interface="io.kickplug.api.guest.GuestWorkloads" field="workloads"/>
                <reference name="disks" interface="io.kickplug.api.blk.DiskManager" parameter="0"/>
                <implementation class="io.kickplug.shell.IoCommand"/>
              </scr:component>
              <scr:component name="engine" configuration-policy="require">
                <service>
                  <provide interface="io.kickplug.api.guest.GuestControl"/>
                  <provide interface="io.kickplug.api.guest.GuestWorkloads"/>
                </service>
                <reference name="kick" interface="io.kickplug.api.guest.KickPolicy" cardinality="0..n"/>
                <implementation class="x.Engine"/>
              </scr:component>
            </components>
            """;

    private static final String SINGLE_FUNCTION = command("one", "", "bench", "x.One");

    private static final String NOT_A_COMMAND = """
            <scr:component xmlns:scr="http://www.osgi.org/xmlns/scr/v1.3.0" name="manager">
              <service><provide interface="io.kickplug.api.blk.DiskManager"/></service>
              <implementation class="x.Manager"/>
            </scr:component>
            """;

    private static final String NEEDS_CONFIGURATION = command("cfg", " configuration-policy=\"require\"", "x", "x.Cfg");

    private static final String DISABLED = command("off", " enabled=\"false\"", "x", "x.Off");

    /** A command component with one function, {@code attributes} added to its component element. */
    private static String command(String name, String attributes, String function, String implementation) {
        return """
                <scr:component xmlns:scr="http://www.osgi.org/xmlns/scr/v1.3.0" name="%s"%s>
                  <property name="osgi.command.scope" value="kp"/>
                  <property name="osgi.command.function" value="%s"/>
                  <service><provide interface="java.lang.Object"/></service>
                  <implementation class="%s"/>
                </scr:component>
                """.formatted(name, attributes, function, implementation);
    }

    @TempDir
    Path dir;

    @Test
    void readsScopeAndMultiValuedFunctions() throws IOException {
        assertEquals(List.of(new CommandComponents.Command("io.kickplug.shell.DiskCommands", "kp",
                List.of("attach", "detach", "disks", "io"))), parse(COMMANDS).commands());
        assertEquals(Set.of("io.kickplug.shell.DiskCommands"), parse(COMMANDS).provides());
        assertEquals(Set.of(), parse(COMMANDS).references());
    }

    /** What LazyStart decides by: the interfaces a command references, and those any component provides. */
    @Test
    void readsWhatComponentsReferenceAndProvide() throws IOException {
        CommandComponents.Descriptions d = parse(WITH_REFERENCES);
        assertEquals(List.of(new CommandComponents.Command("io.kickplug.shell.IoCommand", "kp", List.of("io"),
                List.of("io.kickplug.api.blk.DiskManager", "io.kickplug.api.guest.GuestWorkloads"))), d.commands());
        assertEquals(Set.of("io.kickplug.shell.IoCommand", "io.kickplug.api.guest.GuestControl",
                "io.kickplug.api.guest.GuestWorkloads"), d.provides(),
                "a component waiting for its configuration counts: the statements may configure it");
        assertEquals(Set.of("io.kickplug.api.guest.GuestWorkloads", "io.kickplug.api.blk.DiskManager",
                "io.kickplug.api.guest.KickPolicy"), d.references());
    }

    @Test
    void readsSingleValuedFunction() throws IOException {
        assertEquals(List.of(new CommandComponents.Command("one", "kp", List.of("bench"))),
                parse(SINGLE_FUNCTION).commands());
    }

    @Test
    void ignoresComponentsThatAreNotCommandsOrCannotActivateAlone() throws IOException {
        assertTrue(parse(NOT_A_COMMAND).commands().isEmpty());
        assertEquals(Set.of("io.kickplug.api.blk.DiskManager"), parse(NOT_A_COMMAND).provides());
        assertTrue(parse(NEEDS_CONFIGURATION).commands().isEmpty());
        assertTrue(parse(DISABLED).commands().isEmpty());
    }

    @Test
    void readsTheDescriptionsTheManifestNames() throws IOException {
        Path jar = TestJars.write(dir.resolve("shell.jar"),
                Map.of("Bundle-SymbolicName", "io.kickplug.shell",
                        "Service-Component", "OSGI-INF/a.xml, OSGI-INF/b.xml"),
                Map.of("OSGI-INF/a.xml", COMMANDS, "OSGI-INF/b.xml", SINGLE_FUNCTION,
                        "OSGI-INF/unlisted.xml", NOT_A_COMMAND));
        assertEquals(List.of("io.kickplug.shell.DiskCommands", "one"),
                CommandComponents.of(jar).commands().stream().map(CommandComponents.Command::componentName).toList());
        assertEquals(Set.of("io.kickplug.shell.DiskCommands", "java.lang.Object"), CommandComponents.of(jar).provides(),
                "the listed descriptions only");
        // the implementation class, for the command reference: a component's name need not be its class
        assertEquals(List.of("io.kickplug.shell.DiskCommands", "x.One"), CommandComponents.implementationsOf(jar)
                .stream().map(CommandComponents.Implemented::implementation).toList());
    }

    @Test
    void expandsWildcardsInTheHeader() throws IOException {
        Path jar = TestJars.write(dir.resolve("w.jar"), Map.of("Service-Component", "OSGI-INF/*.xml"),
                Map.of("OSGI-INF/a.xml", COMMANDS, "OSGI-INF/sub/b.xml", SINGLE_FUNCTION));
        assertEquals(List.of("io.kickplug.shell.DiskCommands"),
                CommandComponents.of(jar).commands().stream().map(CommandComponents.Command::componentName).toList());
    }

    @Test
    void bundleWithoutComponentsHasNone() throws IOException {
        Path jar = TestJars.bundle(dir, "api.jar", "io.kickplug.api");
        assertEquals(CommandComponents.Descriptions.NONE, CommandComponents.of(jar));
    }

    private static CommandComponents.Descriptions parse(String xml) throws IOException {
        return CommandComponents.parse(new ByteArrayInputStream(xml.strip().getBytes(StandardCharsets.UTF_8)), "test");
    }
}
