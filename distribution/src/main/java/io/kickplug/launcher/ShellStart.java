package io.kickplug.launcher;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;
import org.osgi.framework.ServiceRegistration;

/**
 * Knows when gogo.shell's start job is over, so that the framework is not stopped in the middle of it.
 *
 * <p>gogo.shell 1.1.4 starts, on a thread of its own ("Gogo shell"), a job that waits until Gogo knows its
 * {@code gosh} command and then runs {@code gosh --login <gosh.args>} (with {@code --nointeractive}: the login
 * profile, then it returns). Stopping the bundle unregisters {@code gosh} first and ends the job only after:
 * when the framework stops (SIGTERM, the end of a {@code -c} run) after the job saw {@code gosh} but before it
 * ran it, the job prints {@code gogo: CommandNotFoundException: Command not found: gosh} to stderr. On a
 * loaded machine the job's thread can wait long for a CPU, so this happened to a daemon stopped right after it
 * said it was running (issue 13). The launcher therefore watches the job's statement through Gogo's public
 * {@code CommandSessionListener} and lets {@link Launcher#shutdown} wait for its end (bounded) before it stops
 * the framework.
 */
final class ShellStart {

    static final String LISTENER = "org.apache.felix.service.command.CommandSessionListener";
    /** What the job runs; {@code gosh.args} follow. */
    static final String JOB_STATEMENT = "gosh --login";

    private final CountDownLatch done = new CountDownLatch(1);
    private volatile Bundle shell;
    private ServiceRegistration<?> registration;

    /**
     * Registers the listener through the bundle of Gogo's command processor (which exports the listener type),
     * or returns a watch that never waits when Gogo's runtime is not there.
     */
    static ShellStart watch(BundleContext context) {
        ShellStart watch = new ShellStart();
        ServiceReference<?> processor = context.getServiceReference(GogoSession.PROCESSOR);
        if (processor == null) {
            return watch;
        }
        Bundle runtime = processor.getBundle();
        BundleContext runtimeContext = runtime == null ? null : runtime.getBundleContext();
        if (runtimeContext == null) {
            return watch;
        }
        try {
            Class<?> type = runtime.loadClass(LISTENER);
            InvocationHandler handler = (proxy, method, args) -> {
                switch (method.getName()) {
                    case "afterExecute" -> {
                        if (args != null && args.length == 3 && isJobStatement(args[1])) {
                            watch.done.countDown();
                        }
                        return null;
                    }
                    case "beforeExecute" -> {
                        return null;
                    }
                    case "hashCode" -> {
                        return System.identityHashCode(proxy);
                    }
                    case "equals" -> {
                        return proxy == args[0];
                    }
                    case "toString" -> {
                        return "kickplug launcher: gogo.shell start watch";
                    }
                    default -> throw new UnsupportedOperationException(method.getName());
                }
            };
            Object listener = Proxy.newProxyInstance(type.getClassLoader(), new Class<?>[] {type}, handler);
            watch.registration = runtimeContext.registerService(LISTENER, listener, null);
        } catch (ClassNotFoundException | RuntimeException e) {
            // An older or newer Gogo without the type: nothing to wait for, as before.
        }
        return watch;
    }

    static boolean isJobStatement(Object statement) {
        return statement != null && statement.toString().startsWith(JOB_STATEMENT);
    }

    /** Called before the launcher starts gogo.shell: from now on, {@link #await} waits for its job. */
    void starting(Bundle gogoShell) {
        if (registration != null) {
            shell = gogoShell;
        }
    }

    /**
     * Waits until the job has run its statement, the shell bundle is neither starting nor active any more,
     * or {@code timeout} has passed; at once when the shell was not started after {@link #watch}.
     *
     * @return whether the job is known to be over (or there was none)
     */
    boolean await(Duration timeout) throws InterruptedException {
        Bundle bundle = shell;
        if (bundle == null) {
            return true;
        }
        long deadline = System.nanoTime() + timeout.toNanos();
        // Polls the bundle's state between waits: a start that failed (framework stopping) never runs the job.
        while (!done.await(10, TimeUnit.MILLISECONDS)) {
            if ((bundle.getState() & (Bundle.STARTING | Bundle.ACTIVE)) == 0) {
                return done.getCount() == 0;
            }
            if (System.nanoTime() - deadline > 0) {
                return false;
            }
        }
        return true;
    }

    /** Whether the job has run its statement. */
    boolean jobDone() {
        return done.getCount() == 0;
    }

    /** Removes the listener (the framework removes it anyway when Gogo's runtime stops). */
    void close() {
        ServiceRegistration<?> r = registration;
        registration = null;
        if (r != null) {
            try {
                r.unregister();
            } catch (IllegalStateException e) {
                // Already gone with its bundle.
            }
        }
    }
}
