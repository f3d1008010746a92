package io.kickplug.launcher;

import java.io.ByteArrayOutputStream;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.osgi.framework.BundleContext;

/**
 * Control-socket sessions on Gogo: each client gets its own {@link GogoSession}; a statement's answer is
 * exactly what {@code -c} would print for it (its output, then its formatted result on a line of its own).
 */
final class GogoStatements implements ControlServer.Statements {

    private final BundleContext context;
    private final List<String> preamble;

    GogoStatements(BundleContext context, List<String> preamble) {
        this.context = context;
        this.preamble = List.copyOf(preamble);
    }

    @Override
    public ControlServer.Session open() throws Exception {
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
