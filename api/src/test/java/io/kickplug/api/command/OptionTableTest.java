package io.kickplug.api.command;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link OptionTable}: lookups by name and alias, and the messages parsers build from it. */
class OptionTableTest {

    private final OptionTable.Option runtime = OptionTable.Option.valued("--runtime", "S", "3s", "runtime");
    private final OptionTable.Option iops = OptionTable.Option.valued("--iops-total", "N", "0", "limit")
            .alias("--iops");
    private final OptionTable.Option quick = OptionTable.Option.flag("--quick", "fewer points");
    private final OptionTable table = new OptionTable("seeds [options]", "the seeds", runtime, iops, quick);

    @Test
    void findsOptionsByNameAndAlias() {
        assertSame(iops, table.find("--iops"));
        assertSame(iops, table.find("--iops-total"));
        assertEquals("--iops-total", table.find("--iops").name());
        assertNull(table.find("--iopz"));
        assertFalse(table.has("runtime"), "names keep their --");
        assertEquals(Set.of("--quick"), table.flags());
        assertTrue(quick.flag());
        assertFalse(runtime.flag());
    }

    @Test
    void messagesListTheOptionsInTableOrder() {
        assertEquals("--runtime, --iops-total or --quick", table.names());
        assertEquals("--runtime S, --iops-total N or --quick", table.expected());
        assertEquals("unknown option --x (expected --runtime, --iops-total or --quick)",
                table.unknown("--x").getMessage());
        OptionTable one = new OptionTable("x", "one", List.of(runtime));
        assertEquals("--runtime S", one.expected());
    }

    @Test
    void refusesNamesWithoutDashesAndNamesGivenTwice() {
        assertThrows(IllegalArgumentException.class, () -> OptionTable.Option.flag("quick", "no dashes"));
        assertThrows(IllegalArgumentException.class, () -> OptionTable.Option.flag("--", "no name"));
        assertEquals("option --iops is in the table twice", assertThrows(IllegalArgumentException.class,
                () -> new OptionTable("x", "twice", iops, OptionTable.Option.flag("--iops", "again"))).getMessage());
    }
}
