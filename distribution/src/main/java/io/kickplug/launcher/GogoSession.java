package io.kickplug.launcher;

import java.io.InputStream;
import java.io.OutputStream;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.util.Collection;
import java.util.HashSet;
import java.util.Set;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/**
 * A Gogo {@code CommandSession} used by reflection. The Gogo API classes live in the framework (the
 * gogo.runtime bundle), not on the launcher's class path, so the launcher looks the interfaces up through the
 * bundle that registered the {@code CommandProcessor}.
 */
final class GogoSession implements AutoCloseable {

    static final String PROCESSOR = "org.apache.felix.service.command.CommandProcessor";
    private static final String SESSION = "org.apache.felix.service.command.CommandSession";
    /** {@code Converter.INSPECT}: the level the interactive console formats results with. */
    private static final int INSPECT = 0;

    private final BundleContext context;
    private final ServiceReference<?> reference;
    private final Object session;
    private final Method execute;
    private final Method format;
    private final Method close;

    private GogoSession(BundleContext context, ServiceReference<?> reference, Object session, Class<?> type)
            throws NoSuchMethodException {
        this.context = context;
        this.reference = reference;
        this.session = session;
        this.execute = type.getMethod("execute", CharSequence.class);
        this.format = type.getMethod("format", Object.class, int.class);
        this.close = type.getMethod("close");
    }

    /**
     * Opens a session on the streams given. They must not be {@code System.in/out/err}: Gogo's ThreadIO
     * replaces those with proxies, and a session on the proxy writes to itself (build-facts gotcha 22).
     */
    static GogoSession open(BundleContext context, InputStream in, OutputStream out, OutputStream err)
            throws Exception {
        ServiceReference<?> reference = context.getServiceReference(PROCESSOR);
        if (reference == null) {
            throw new IllegalStateException("the Gogo command processor is not running");
        }
        Object processor = context.getService(reference);
        if (processor == null) {
            throw new IllegalStateException("the Gogo command processor went away");
        }
        Class<?> processorType = reference.getBundle().loadClass(PROCESSOR);
        Class<?> sessionType = reference.getBundle().loadClass(SESSION);
        Object session = invoke(processorType.getMethod("createSession", InputStream.class, OutputStream.class,
                OutputStream.class), processor, in, out, err);
        GogoSession gogo = new GogoSession(context, reference, session, sessionType);
        // Gosh sets this for its own sessions; closures such as "each ($.context bundles) {...}" need it.
        invoke(sessionType.getMethod("put", String.class, Object.class), session, ".context", context);
        return gogo;
    }

    /** Runs one statement; what the statement throws is thrown unwrapped. */
    Object execute(String statement) throws Exception {
        return invoke(execute, session, statement);
    }

    /** The result as the interactive console would show it. */
    String format(Object result) throws Exception {
        Object text = invoke(format, session, result, INSPECT);
        return text == null ? String.valueOf(result) : text.toString();
    }

    /**
     * The commands Gogo knows ({@code scope:function}), or {@code null} when the runtime does not say (the
     * method belongs to gogo.runtime's implementation, not its API).
     */
    static Set<String> knownCommands(BundleContext context) {
        ServiceReference<?> reference = context.getServiceReference(PROCESSOR);
        if (reference == null) {
            return Set.of();
        }
        Object processor = context.getService(reference);
        try {
            if (processor == null) {
                return Set.of();
            }
            Object commands = processor.getClass().getMethod("getCommands").invoke(processor);
            if (commands instanceof Collection<?> c) {
                Set<String> out = new HashSet<>();
                for (Object o : c) {
                    out.add(String.valueOf(o));
                }
                return out;
            }
            return null;
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        } finally {
            context.ungetService(reference);
        }
    }

    @Override
    public void close() {
        try {
            invoke(close, session);
        } catch (Exception e) {
            // Closing a session of a stopping framework may fail; nothing is left to release then.
        } finally {
            try {
                context.ungetService(reference);
            } catch (IllegalStateException e) {
                // The framework has already stopped.
            }
        }
    }

    private static Object invoke(Method method, Object target, Object... args) throws Exception {
        try {
            return method.invoke(target, args);
        } catch (InvocationTargetException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception ex) {
                throw ex;
            }
            if (cause instanceof Error err) {
                throw err;
            }
            throw e;
        }
    }
}
