package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link LazyStart#CONSOLE_COMMANDS} lists the functions gogo.shell and gogo.command register from their
 * activators; a daemon starts them before its statements only when a statement uses one. This checks the lists
 * against what the distribution's Gogo really knows (its {@code .commands} variable), so a Gogo upgrade that
 * adds a built-in cannot make a daemon script fail with "Command not found".
 */
class ConsoleFunctionsIT {

    @TempDir
    Path work;

    @Test
    void theListedConsoleFunctionsAreExactlyTheOnesGogoRegisters() throws Exception {
        Path jar = Path.of(System.getProperty("kickplug.jar", "target/kickplug.jar")).toAbsolutePath();
        Path out = work.resolve("out");
        Process p = new ProcessBuilder("java", "-jar", jar.toString(), "-c", "echo ${.commands}")
                .directory(work.toFile()).redirectInput(ProcessBuilder.Redirect.from(new java.io.File("/dev/null")))
                .redirectOutput(out.toFile()).redirectErrorStream(true).start();
        assertTrue(p.waitFor(120, TimeUnit.SECONDS), "the launcher did not finish");
        String text = Files.readString(out, StandardCharsets.UTF_8);
        assertEquals(0, p.exitValue(), text);
        Set<String> known = Arrays.stream(text.split("[\\s,\\[\\]]+")).filter(s -> !s.isEmpty())
                .collect(Collectors.toCollection(TreeSet::new));
        for (var e : LazyStart.CONSOLE_COMMANDS.entrySet()) {
            CommandComponents.Command c = e.getValue().get(0);
            Set<String> registered = known.stream().filter(s -> s.startsWith(c.scope() + ":"))
                    .map(s -> s.substring(c.scope().length() + 1)).collect(Collectors.toCollection(TreeSet::new));
            assertEquals(new TreeSet<>(c.functions()), registered, e.getKey() + " registers other functions");
        }
    }
}
