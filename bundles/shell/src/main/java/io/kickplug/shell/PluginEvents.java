package io.kickplug.shell;

import java.util.StringJoiner;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.SynchronousBundleListener;
import org.osgi.framework.InvalidSyntaxException;
import org.osgi.framework.ServiceEvent;
import org.osgi.framework.ServiceListener;
import org.osgi.framework.ServiceReference;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;

/**
 * Watches the framework for plugin services that come and go, and their bundles, into {@link Departures}: the
 * commands' source for why a configured strategy (or filter) is not bound. Immediate, so it watches from the start.
 * Both listeners are synchronous (service events always are; the bundle listener is a synchronous one), so the
 * reason is there when {@code kp:uninstall}'s uninstall returns.
 */
@Component(service = PluginEvents.class, immediate = true)
public final class PluginEvents implements ServiceListener, SynchronousBundleListener {

    private final Departures departures = new Departures();
    private BundleContext context;

    @Activate
    void activate(BundleContext ctx) throws InvalidSyntaxException {
        this.context = ctx;
        StringJoiner filter = new StringJoiner("", "(|", ")");
        for (PluginKind k : PluginKind.ALL) {
            filter.add("(objectClass=" + k.serviceClass + ")");
        }
        ctx.addServiceListener(this, filter.toString());
        ctx.addBundleListener(this);
    }

    @Deactivate
    void deactivate() {
        try {
            context.removeServiceListener(this);
            context.removeBundleListener(this);
        } catch (IllegalStateException stopping) {
            // the framework removes them with the bundle
        }
    }

    Departures departures() {
        return departures;
    }

    @Override
    public void serviceChanged(ServiceEvent event) {
        ServiceReference<?> ref = event.getServiceReference();
        Provided p = Plugins.provided(ref);
        if (p == null) {
            return;
        }
        if (event.getType() == ServiceEvent.REGISTERED) {
            departures.registered(p);
        } else if (event.getType() == ServiceEvent.UNREGISTERING) {
            Bundle b = ref.getBundle();
            boolean stopping = b != null && (b.getState() & (Bundle.STOPPING | Bundle.RESOLVED)) != 0;
            departures.unregistered(p, stopping);
        }
    }

    @Override
    public void bundleChanged(BundleEvent event) {
        switch (event.getType()) {
            case BundleEvent.UNINSTALLED -> departures.bundleEvent(event.getBundle().getBundleId(), "uninstalled");
            case BundleEvent.UPDATED -> departures.bundleEvent(event.getBundle().getBundleId(), "updated");
            default -> {
            }
        }
    }
}
