package io.kickplug.launcher;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.osgi.framework.BundleContext;

/**
 * Control-socket sessions on Gogo: each client gets its own {@link GogoSession}; a statement's answer is
 * exactly what {@code -c} would print for it (its output, then its formatted result on a line of its own).
 */
final class GogoStatements implements ControlServer.Statements {

    /** How long a client waits for the bundles a daemon starts after ready (see {@link LazyStart}). */
    static final long LATER_WAIT_SECONDS = 30;

    private final BundleContext context;
    private final List<String> preamble;
    private final CountDownLatch laterStarted;
    /** Called with each statement before it runs: starts the bundles it needs that a daemon starts on demand. */
    private final Consumer<String> beforeStatement;

    GogoStatements(BundleContext context, List<String> preamble) {
        this(context, preamble, new CountDownLatch(0), statement -> { });
    }

    GogoStatements(BundleContext context, List<String> preamble, CountDownLatch laterStarted) {
        this(context, preamble, laterStarted, statement -> { });
    }

    /**
     * @param laterStarted open once the bundles a daemon starts after ready have started: a client that connects
     *     the moment the socket appears would otherwise find their commands half registered (gogo.command's
     *     {@code felix:update} without gogo.shell's converters: "Cannot coerce update(Token)"), or the shell
     *     bundle's commands without the services of these bundles (kp:io: "the io.kickplug.guest bundle is not
     *     active"). SCR's extender is synchronous: it registers a started bundle's components, and the commands'
     *     dynamic references bind them, within {@code Bundle.start}; once this is open, those services are there.
     * @param beforeStatement called with each statement before it runs: a daemon starts the console bundles
     *     ({@link LazyStart#ON_DEMAND}) only when a statement uses one of their functions
     */
    GogoStatements(BundleContext context, List<String> preamble, CountDownLatch laterStarted,
            Consumer<String> beforeStatement) {
        this.context = context;
        this.preamble = List.copyOf(preamble);
        this.laterStarted = laterStarted;
        this.beforeStatement = beforeStatement;
    }

    @Override
    public ControlServer.Session open() throws Exception {
        // A bundle that does not start in time is logged by the launcher; the client then gets what is there.
        laterStarted.await(LATER_WAIT_SECONDS, TimeUnit.SECONDS);
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        GogoSession gogo = GogoSession.open(context, InputStream.nullInputStream(), printed, printed);
        for (String statement : preamble) {
            try {
                gogo.execute(statement);
            } catch (Exception e) {
                // Conveniences only, as for -c.
            }
        }
        printed.reset();
        return new ControlServer.Session() {
            @Override
            public String run(String statement) throws Exception {
                printed.reset();
                beforeStatement.accept(statement);
                Object result = gogo.execute(statement);
                StringBuilder out = new StringBuilder(printed.toString(StandardCharsets.UTF_8));
                if (result != null) {
                    out.append(gogo.format(result)).append('\n');
                }
                return out.toString();
            }

            @Override
            public void close() {
                gogo.close();
            }
        };
    }
}
