package io.kickplug.shell;

import java.lang.System.Logger.Level;
import org.osgi.framework.BundleContext;
import org.osgi.framework.BundleEvent;
import org.osgi.framework.SynchronousBundleListener;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;

/**
 * Says what stopping the api bundle does, since {@code felix:stop io.kickplug.api} succeeds silently otherwise
 * (issue 11: bad moves get clear messages): nothing changes. The api bundle holds no state and has no
 * activator; every Kickplug bundle stays wired to the packages of the revision it resolved against, so disks
 * and commands go on. The warning is logged during the stop (a synchronous listener), so it appears before the
 * command returns.
 */
@Component(immediate = true)
public final class ApiStopNotice {

    private static final System.Logger LOG = System.getLogger(ApiStopNotice.class.getName());
    private static final String API = "io.kickplug.api";

    private final BundleContext context;
    private final SynchronousBundleListener listener = event -> {
        if (event.getType() == BundleEvent.STOPPED && API.equals(event.getBundle().getSymbolicName())) {
            LOG.log(Level.WARNING, API + " stopped: nothing changes. It holds no state, and every Kickplug bundle "
                    + "stays wired to its packages, so disks and commands keep running; a new version of it "
                    + "takes effect only by refreshing every Kickplug bundle, which no disk survives as a swap "
                    + "(kp:swap refuses it). felix:start " + API + " to make it look active again.");
        }
    };

    @Activate
    public ApiStopNotice(BundleContext context) {
        this.context = context;
        context.addBundleListener(listener);
    }

    @Deactivate
    void deactivate() {
        try {
            context.removeBundleListener(listener);
        } catch (IllegalStateException e) {
            // our context is gone already
        }
    }
}
