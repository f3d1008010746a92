package io.kickplug.launcher;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.osgi.framework.BundleContext;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceListener;
import org.osgi.framework.ServiceReference;

/**
 * Waits until the Gogo command processor runs and every expected command component has registered its
 * service and Gogo has taken up its functions. Woken by service events, re-checked at least every 50 ms
 * (Gogo takes a command up in its own service listener, which may run just after ours).
 */
final class Readiness {

    private static final long RECHECK_MILLIS = 50;

    private Readiness() {
    }

    /** What is still missing after waiting at most {@code timeout}; empty when everything is ready. */
    static List<String> await(BundleContext context, List<CommandComponents.Command> expected, Duration timeout)
            throws InterruptedException {
        Object signal = new Object();
        ServiceListener listener = event -> {
            synchronized (signal) {
                signal.notifyAll();
            }
        };
        context.addServiceListener(listener);
        try {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                List<String> missing = missing(context, expected);
                long left = deadline - System.nanoTime();
                if (missing.isEmpty() || left <= 0) {
                    return missing;
                }
                synchronized (signal) {
                    signal.wait(Math.max(1, Math.min(RECHECK_MILLIS, TimeUnit.NANOSECONDS.toMillis(left))));
                }
            }
        } finally {
            context.removeServiceListener(listener);
        }
    }

    static List<String> missing(BundleContext context, List<CommandComponents.Command> expected) {
        List<String> missing = new ArrayList<>();
        if (context.getServiceReference(GogoSession.PROCESSOR) == null) {
            missing.add("the Gogo command processor");
            return missing;
        }
        Set<String> known = GogoSession.knownCommands(context);
        Set<String> knownLower = known == null ? null
                : known.stream().map(s -> s.toLowerCase(Locale.ROOT)).collect(Collectors.toSet());
        for (CommandComponents.Command command : expected) {
            if (!registered(context, command.componentName())) {
                missing.add("component " + command.componentName());
                continue;
            }
            if (knownLower != null) {
                for (String function : command.functions()) {
                    String name = (command.scope() + ":" + function).toLowerCase(Locale.ROOT);
                    if (!knownLower.contains(name)) {
                        missing.add("command " + command.scope() + ":" + function);
                    }
                }
            }
        }
        return missing;
    }

    private static boolean registered(BundleContext context, String componentName) {
        try {
            ServiceReference<?>[] refs = context.getServiceReferences((String) null,
                    "(component.name=" + escape(componentName) + ")");
            return refs != null && refs.length > 0;
        } catch (InvalidSyntaxException e) {
            throw new IllegalStateException("bad component name " + componentName, e);
        }
    }

    /** Escapes an LDAP filter value (RFC 1960: backslash, asterisk and parentheses). */
    static String escape(String value) {
        StringBuilder out = new StringBuilder(value.length());
        for (char c : value.toCharArray()) {
            if (c == '\\' || c == '*' || c == '(' || c == ')') {
                out.append('\\');
            }
            out.append(c);
        }
        return out.toString();
    }
}
