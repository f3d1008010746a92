package io.kickplug.shell.testkit;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.lang.reflect.Parameter;
import org.apache.felix.gogo.runtime.CommandProcessorImpl;
import org.apache.felix.gogo.runtime.threadio.ThreadIOImpl;
import org.apache.felix.service.command.CommandSession;
import org.apache.felix.service.command.Descriptor;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Gogo's own parser and argument coercion in a test, without a framework: register command objects, then
 * {@link #run} lines as a user types them. As a JUnit extension ({@code @RegisterExtension final GogoShell shell =
 * new GogoShell();}) it closes itself after each test; otherwise close it after the test.
 */
public final class GogoShell implements AutoCloseable, AfterEachCallback {

    private final ThreadIOImpl threadIo = new ThreadIOImpl();
    private final CommandProcessorImpl processor;
    private final ByteArrayOutputStream out = new ByteArrayOutputStream();
    private CommandSession session;

    public GogoShell() {
        threadIo.start();
        processor = new CommandProcessorImpl(threadIo);
    }

    /** Registers {@code functions} of {@code commands} under {@code scope} (as osgi.command.function does). */
    public GogoShell add(String scope, Object commands, String... functions) {
        for (String f : functions) {
            processor.addCommand(scope, commands, f);
        }
        return this;
    }

    /** Runs one command line; returns what the command returned. */
    public Object run(String line) throws Exception {
        if (session == null) {
            session = processor.createSession(new ByteArrayInputStream(new byte[0]), out, out);
        }
        return session.execute(line);
    }

    /**
     * Runs one command line that must fail with {@code type}; returns the failure's message (the one line a
     * user sees).
     */
    public String refusal(Class<? extends Exception> type, String line) {
        return Assertions.assertThrows(type, () -> run(line)).getMessage();
    }

    /** {@link #refusal(Class, String)} for the usual bad-argument failure. */
    public String refusal(String line) {
        return refusal(IllegalArgumentException.class, line);
    }

    /**
     * Asserts that every public method of {@code commands} (a Gogo command each) and each of its parameters has a
     * {@link Descriptor} (what {@code help} shows); returns how many commands there are.
     */
    public static int assertEveryCommandDescribed(Class<?> commands) {
        int count = 0;
        for (Method m : commands.getDeclaredMethods()) {
            if (!Modifier.isPublic(m.getModifiers())) {
                continue;
            }
            count++;
            Assertions.assertNotNull(m.getAnnotation(Descriptor.class), m.getName());
            for (Parameter p : m.getParameters()) {
                Assertions.assertNotNull(p.getAnnotation(Descriptor.class), m.getName() + " " + p.getName());
            }
        }
        return count;
    }

    /** What the commands printed so far. */
    public String output() {
        return out.toString();
    }

    @Override
    public void afterEach(ExtensionContext context) {
        close();
    }

    @Override
    public void close() {
        if (session != null) {
            session.close();
        }
        threadIo.stop();
    }
}
