package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class OptionsTest {

    @Test
    void noArgumentsMeansInteractive() throws Exception {
        Options o = Options.parse();
        assertTrue(o.interactive());
        assertFalse(o.daemon());
        assertNull(o.cache());
    }

    @Test
    void sourcesKeepCommandLineOrder() throws Exception {
        Options o = Options.parse("-c", "lb", "-f", "a.gosh", "--demo", "-c", "echo x");
        assertEquals(List.of(new Options.Source.Command("lb"), new Options.Source.Script(Path.of("a.gosh")),
                new Options.Source.Demo(), new Options.Source.Command("echo x")), o.sources());
        assertFalse(o.interactive());
    }

    @Test
    void daemonAloneIsNotInteractive() throws Exception {
        Options o = Options.parse("--daemon");
        assertTrue(o.daemon());
        assertFalse(o.interactive());
        assertTrue(o.sources().isEmpty());
    }

    @Test
    void flags() throws Exception {
        Options o = Options.parse("--cache", "/tmp/c", "--verbose", "--help");
        assertEquals(Path.of("/tmp/c"), o.cache());
        assertTrue(o.verbose());
        assertTrue(o.help());
    }

    @Test
    void missingValueIsAUsageError() {
        Options.UsageException e = assertThrows(Options.UsageException.class, () -> Options.parse("-c"));
        assertEquals("-c needs a value (try --help)", e.getMessage());
        assertThrows(Options.UsageException.class, () -> Options.parse("--cache"));
        assertThrows(Options.UsageException.class, () -> Options.parse("-f"));
    }

    @Test
    void unknownArgumentIsAUsageError() {
        Options.UsageException e = assertThrows(Options.UsageException.class, () -> Options.parse("lb"));
        assertEquals("unknown argument 'lb' (try --help)", e.getMessage());
    }

    @Test
    void cacheTwiceIsAUsageError() {
        assertThrows(Options.UsageException.class, () -> Options.parse("--cache", "a", "--cache", "b"));
    }
}
