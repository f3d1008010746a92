package io.kickplug.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The reference generator on commands and metatype made for the purpose ({@link DemoCommands}, XML below). */
class ReferenceDocsTest {

    private static CommandDocs.Command demo(String function) {
        return CommandDocs.describe("kp", function, "io.kickplug.demo", DemoCommands.class);
    }

    @Test
    void anOptionWithAnAbsentValueIsListedWithItAsDefault() {
        CommandDocs.Form attach = demo("attach").methods().get(0);
        CommandDocs.Option backend = attach.options().get(0);
        assertEquals(List.of("--backend", "-b"), backend.names());
        assertEquals("memory", backend.defaultValue());
        assertTrue(ReferencePages.commands(List.of(demo("attach")))
                .contains("| `--backend`, `-b` | value | memory | backend: file or memory |\n"));
    }

    @Test
    void aFlagTakesNoValueAndIsOffByDefault() {
        CommandDocs.Option readOnly = demo("attach").methods().get(0).options().get(1);
        assertTrue(readOnly.flag());
        assertFalse(demo("attach").methods().get(0).options().get(0).flag(), "--backend takes a value");
        assertTrue(ReferencePages.commands(List.of(demo("attach")))
                .contains("| `--readonly` | flag | off | refuse writes |\n"));
    }

    @Test
    void synopsesNameOperandsByDescriptorOrParameterName() {
        assertEquals("kp:attach [options] NAME [SIZE]", demo("attach").methods().get(0).synopsis());
        assertEquals(new CommandDocs.Operand("NAME [SIZE]", "the disk name and its size"),
                demo("attach").methods().get(0).operands().get(0));
        List<CommandDocs.Form> poll = demo("poll").methods();
        assertEquals(List.of("kp:poll DISK", "kp:poll DISK on|off"),
                poll.stream().map(CommandDocs.Form::synopsis).toList(), "overloads, fewest parameters first");
        assertEquals("kp:notify DISK_NAME", demo("notify").methods().get(0).synopsis());
        assertEquals(1, demo("notify").methods().size(), "Object.notify() is no command");
    }

    @Test
    void aHyphenatedCommandIsMainWithoutTheFunctionName() {
        CommandDocs.Command stop = demo("vhost-stop");
        assertEquals("kp:vhost-stop [options] DISK", stop.methods().get(0).synopsis());
        assertEquals("stop an export", stop.methods().get(0).description());
        assertEquals(List.of("--json"), stop.methods().get(0).options().get(0).names());
    }

    @Test
    void optionTablesAreFormsWithTheirValuesAndDefaults() {
        CommandDocs.Command bench = demo("bench");
        assertEquals("kp:bench BENCHMARK [options]", bench.methods().get(0).synopsis());
        CommandDocs.Form kick = bench.tables().get(0);
        assertEquals("kp:bench kick [options]", kick.synopsis());
        assertEquals(List.of("--quick", "--runtime", "--transport"),
                kick.options().stream().map(o -> o.names().get(0)).toList(), "sorted");
        String page = ReferencePages.commands(List.of(bench));
        assertTrue(page.contains("| `--runtime` | `S` | 10s | runtime of each run |\n"), page);
        assertTrue(page.contains("| `--transport` | `mmio\\|pci` | mmio | the disk's transport |\n"), page);
        assertTrue(page.contains("| `--quick` | flag | off | fewer points |\n"), page);
    }

    @Test
    void aClassWithoutTheFunctionsMethodIsAnError() {
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CommandDocs.describe("kp", "x", "b",
                String.class)).getMessage().contains("no method for kp:x"));
    }

    @Test
    void thePageIsGroupedSortedAndWrapped() {
        String page = ReferencePages.commands(List.of(demo("poll"), demo("bench"), demo("attach"), demo("notify"),
                demo("vhost-stop")));
        assertEquals(page, ReferencePages.commands(List.of(demo("vhost-stop"), demo("notify"), demo("attach"),
                demo("bench"), demo("poll"))), "the order given does not matter");
        int disks = page.indexOf("## Disks");
        int polling = page.indexOf("## Notification and polling");
        int vhost = page.indexOf("## vhost-user");
        int benchmarks = page.indexOf("## Benchmarks");
        assertTrue(disks >= 0 && disks < polling && polling < vhost && vhost < benchmarks, page);
        assertTrue(page.indexOf("### kp:notify") < page.indexOf("### kp:poll"), "by name within a group");
        assertTrue(page.contains("| [kp:attach](#kpattach) | attach a disk |"), page);
        for (String line : page.split("\n")) {
            assertTrue(line.startsWith("|") || line.length() <= ReferencePages.WIDTH, line);
        }
        assertEquals("kpvhost-stop", ReferencePages.anchor("kp:vhost-stop"));
        assertEquals(ReferencePages.OTHER, ReferencePages.group("no-such-command"));
    }

    private static final String METATYPE = """
            <?xml version="1.0" encoding="UTF-8"?>
            <metatype:MetaData xmlns:metatype="http://www.osgi.org/xmlns/metatype/v1.2.0">
              <OCD id="demo.disk" name="Demo disk" description="A disk">
                <AD id="name" type="String" name="Name" description="Unique name"/>
                <AD id="tracked.lock" type="String" name="Tracked lock" description="Lock" default="mutex">
                  <Option label="yielding (CoMutex-like)" value="yielding"/>
                  <Option label="mutex" value="mutex"/>
                  <Option label="one per I/O thread" value="sharded"/>
                </AD>
                <AD id="queues" type="Integer" name="Queues" description="Queues" min="1" max="64" default="1"/>
                <AD id="file" type="String" required="false" name="File" description="Image file" default=""/>
              </OCD>
              <OCD id="demo.undesignated" name="Nobody's" description="No PID">
                <AD id="x" type="String" name="X" description="x"/>
              </OCD>
              <Designate factoryPid="demo.disk">
                <Object ocdref="demo.disk"/>
              </Designate>
            </metatype:MetaData>
            """;

    private static List<MetatypeDocs.Pid> metatype() throws IOException {
        return MetatypeDocs.parse(new ByteArrayInputStream(METATYPE.getBytes(StandardCharsets.UTF_8)), "demo.bundle",
                "test");
    }

    @Test
    void aDesignatedFactoryPidWithItsAttributesSorted() throws IOException {
        List<MetatypeDocs.Pid> pids = metatype();
        assertEquals(1, pids.size(), "an object class no Designate names is no PID");
        MetatypeDocs.Pid disk = pids.get(0);
        assertEquals("demo.disk", disk.pid());
        assertTrue(disk.factory());
        assertEquals(List.of("file", "name", "queues", "tracked.lock"),
                disk.attributes().stream().map(MetatypeDocs.Attribute::id).toList());
        assertFalse(disk.attributes().get(0).required(), "required=\"false\"");
        assertTrue(disk.attributes().get(1).required(), "the metatype's default: required");
    }

    @Test
    void anEnumLikeOptionListMinMaxAndDefaultsOnThePage() throws IOException {
        String page = ReferencePages.configuration(metatype());
        assertTrue(page.contains("## demo.disk\n"), page);
        assertTrue(page.contains("| `tracked.lock` | String | mutex | `yielding` (CoMutex-like), `mutex`, `sharded` "
                + "(one per I/O thread) | yes | Lock |\n"), page);
        assertTrue(page.contains("| `queues` | Integer | 1 | 1 to 64 | yes | Queues |\n"), page);
        assertTrue(page.contains("| `file` | String | (empty) |  | no | Image file |\n"), page);
        assertTrue(page.contains("| `name` | String |  |  | yes | Unique name |\n"), page);
        assertTrue(page.contains("A factory PID (one configuration per instance), from bundle `demo.bundle`."), page);
    }

    @Test
    void theDifferenceNamesTheCommandAndTheOptionThatChanged() {
        String before = ReferencePages.commands(List.of(demo("attach"), demo("poll")));
        String after = before.replace("| refuse writes |", "| refuse all writes |");
        assertEquals(List.of("kp:attach: option --readonly"), DocDiff.differences(before, after));
        assertEquals(List.of(), DocDiff.differences(before, before));
        String text = before.replace("Show polling.", "Show the polling.");
        assertEquals(List.of("kp:poll: text"), DocDiff.differences(before, text));
        String summary = before.replace("| attach a disk |", "| attach one disk |");
        assertEquals(List.of("Disks: command kp:attach"), DocDiff.differences(before, summary));
        String gone = ReferencePages.commands(List.of(demo("attach")));
        assertTrue(DocDiff.differences(before, gone).contains("kp:poll: gone (the code no longer declares it)"),
                DocDiff.differences(before, gone).toString());
        assertTrue(DocDiff.differences(gone, before).contains("kp:poll: new (not in the committed page)"));
        assertTrue(DocDiff.firstDifference(before, after).contains("refuse all writes"));
    }

    @Test
    void theDifferenceNamesThePidAndTheAttribute() throws IOException {
        String before = ReferencePages.configuration(metatype());
        String after = before.replace("| Queues |", "| Virtqueues |");
        assertEquals(List.of("demo.disk: attribute queues"), DocDiff.differences(before, after));
    }
}
