package io.kickplug.launcher;

import io.kickplug.launcher.Launcher.StartupException;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The statements a command line asks for, in its order: {@code -c} text, {@code -f} scripts, {@code --demo} and
 * qemu-storage-daemon options ({@link Qsd}). Used by the launcher and, with no framework at all, by client mode.
 */
final class StatementSources {

    private static final String DEMO = "demo.gosh";

    private StatementSources() {
    }

    static List<String> load(Options options) throws StartupException {
        return load(options, new HashMap<>());
    }

    /**
     * The statements to run, in command-line order; {@code labels} receives, for each statement made from a
     * qemu-storage-daemon option ({@link Qsd}), that option as written (its failure names it).
     */
    static List<String> load(Options options, Map<String, String> labels) throws StartupException {
        List<String> statements = new ArrayList<>();
        Qsd qsd = new Qsd();
        for (Options.Source source : options.sources()) {
            if (source instanceof Options.Source.QsdOption q) {
                try {
                    Qsd.Statement statement = qsd.translate(q.option(), q.value());
                    if (statement != null) {
                        statements.add(statement.text());
                        labels.put(statement.text(), statement.label());
                    }
                } catch (Qsd.QsdException e) {
                    throw new StartupException(e.getMessage(), e);
                }
            } else if (source instanceof Options.Source.Command c) {
                statements.addAll(Statements.split(c.text()));
            } else if (source instanceof Options.Source.Script s) {
                try {
                    statements.addAll(Statements.script(Files.readAllLines(s.file(), StandardCharsets.UTF_8)));
                } catch (NoSuchFileException e) {
                    throw new StartupException("no such script: " + s.file(), e);
                } catch (IOException | UncheckedIOException e) {
                    throw new StartupException("cannot read script " + s.file() + ": " + Errors.message(e), e);
                }
            } else if (source instanceof Options.Source.Demo) {
                try (InputStream in = StatementSources.class.getResourceAsStream(DEMO)) {
                    if (in == null) {
                        throw new StartupException("the demo script is missing from the launcher jar", null);
                    }
                    String text = new String(in.readAllBytes(), StandardCharsets.UTF_8);
                    statements.addAll(Statements.script(text.lines().toList()));
                } catch (IOException e) {
                    throw new StartupException("cannot read the demo script: " + Errors.message(e), e);
                }
            }
        }
        return statements;
    }
}
