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
    void stateOption() throws Exception {
        assertNull(Options.parse("--daemon").state());
        assertEquals(Path.of("/var/lib/kp"), Options.parse("--daemon", "--state", "/var/lib/kp").state());
        assertEquals(Path.of("/tmp/s"), Options.parse("--state", "/tmp/s", "-c", "lb").state());
        assertEquals(Options.NO_STATE, Options.parse("--daemon", "--state", "none").state());
        // none turns the default off, so it goes with --cache; a directory does not.
        assertEquals(Path.of("/tmp/c"), Options.parse("--daemon", "--state", "none", "--cache", "/tmp/c").cache());
        assertEquals("--cache and --state exclude each other", assertThrows(Options.UsageException.class,
                () -> Options.parse("--state", "/tmp/s", "--cache", "/tmp/c")).getMessage());
        assertEquals("--state given twice", assertThrows(Options.UsageException.class,
                () -> Options.parse("--state", "/a", "--state", "/b")).getMessage());
        assertThrows(Options.UsageException.class, () -> Options.parse("--state", ""));
        assertThrows(Options.UsageException.class, () -> Options.parse("--state"));
        assertThrows(Options.UsageException.class, () -> Options.parse("--connect", "/s", "--state", "/a"));
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

    @Test
    void serviceOptions() throws Exception {
        Options o = Options.parse("--daemon", "--control", "/run/kp.sock", "--pidfile", "/run/kp.pid", "--log-level",
                "debug");
        assertEquals(Path.of("/run/kp.sock"), o.control());
        assertEquals(Path.of("/run/kp.pid"), o.pidfile());
        assertEquals("debug", o.logLevel());
        Options c = Options.parse("--connect", "/run/kp.sock", "--wait", "5", "-c", "kp:disks");
        assertEquals(Path.of("/run/kp.sock"), c.connect());
        assertEquals(5, c.waitSeconds());
        assertFalse(c.interactive(), "a client never opens the console");
        assertFalse(Options.parse("--connect", "/run/kp.sock").interactive());
    }

    @Test
    void serviceOptionsRefuseWhatMakesNoSense() {
        assertThrows(Options.UsageException.class, () -> Options.parse("--control", "/run/kp.sock"));
        assertThrows(Options.UsageException.class, () -> Options.parse("--pidfile", "/run/kp.pid", "-c", "lb"));
        assertThrows(Options.UsageException.class, () -> Options.parse("--connect", "s", "--daemon"));
        assertThrows(Options.UsageException.class, () -> Options.parse("--connect", "s", "--demo"));
        assertThrows(Options.UsageException.class, () -> Options.parse("--wait", "3", "-c", "lb"));
        assertThrows(Options.UsageException.class, () -> Options.parse("--connect", "s", "--wait", "-1"));
        assertThrows(Options.UsageException.class, () -> Options.parse("--daemon", "--log-level", "loud"));
        assertThrows(Options.UsageException.class, () -> Options.parse("--daemon", "--control", "a", "--control", "b"));
    }
}
