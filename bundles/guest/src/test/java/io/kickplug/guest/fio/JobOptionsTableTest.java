package io.kickplug.guest.fio;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import io.kickplug.api.command.OptionTable;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The fio option tables (the command reference's source) and the parsers agree: every job option in
 * {@link JobOptions#TABLE}, aliases included, is one {@link JobOptions#set} takes; every literal default given
 * explicitly makes the same job as leaving it out; a name not in the table is refused.
 */
class JobOptionsTableTest {

    /** Values for the options whose documented default is a description or nothing. */
    private static final Map<String, String> SAMPLES = Map.of("--filename", "/dev/vdb", "--bsrange", "4k-8k",
            "--size", "1m", "--runtime", "1s", "--randseed", "7", "--description", "anything", "--thread", "1",
            "--invalidate", "1", "--fadvise_hint", "0");

    @Test
    void everyTableNameIsAJobOptionAndTheLiteralDefaultsAreTheDefaults() {
        List<JobSpec> defaults = new JobOptions().expand("fio", 0);
        for (OptionTable.Option o : JobOptions.TABLE.options()) {
            String value = SAMPLES.getOrDefault(o.name(), o.defaultValue());
            for (String name : o.names()) {
                String key = name.substring(2);
                assertDoesNotThrow(() -> new JobOptions().set(key, value), name + "=" + value);
                if (!SAMPLES.containsKey(o.name())) {
                    assertEquals(defaults, new JobOptions().set(key, value).expand("fio", 0), name + "=" + value);
                }
            }
        }
        assertEquals(JobOptions.NAMES.size(), JobOptions.TABLE.options().stream().mapToInt(o -> o.names().size())
                .sum());
    }

    @Test
    void aNameNotInTheTableIsRefused() {
        assertEquals("unknown fio option 'blocksz'", assertThrows(FioOptionException.class,
                () -> new JobOptions().set("blocksz", "4k")).getMessage());
    }

    @Test
    void theCommandsOwnOptionsAreTakenBeforeTheJobOptions() {
        FioInvocation plain = Fio.parse(List.of("--rw=randread"));
        for (OptionTable.Option o : FioInvocation.TABLE.options()) {
            String value = o.defaultValue().isEmpty() ? "r.html" : o.defaultValue();
            FioInvocation with = Fio.parse(List.of("--rw=randread", o.name() + "=" + value));
            assertEquals(plain.jobs(), with.jobs(), o.name() + " is no job option");
        }
        assertEquals(FioInvocation.OutputFormat.NORMAL, Fio.parse(List.of("--output-format=normal", "--rw=read"))
                .format());
    }
}
