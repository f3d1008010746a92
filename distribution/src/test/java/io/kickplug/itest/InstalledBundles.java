package io.kickplug.itest;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceReference;

/** Bundle and service look-ups inside the framework (in the Pax Exam probe: OSGi types only). */
final class InstalledBundles {

    private InstalledBundles() {
    }

    /** The installed bundle named {@code symbolicName}; an assertion error when there is none. */
    static Bundle named(BundleContext context, String symbolicName) {
        for (Bundle b : context.getBundles()) {
            if (symbolicName.equals(b.getSymbolicName())) {
                return b;
            }
        }
        throw new AssertionError(symbolicName + " is not installed");
    }

    /** The service registered as {@code type}, or null when there is none. */
    static <T> T service(BundleContext context, Class<T> type) {
        ServiceReference<T> ref = context.getServiceReference(type);
        return ref == null ? null : context.getService(ref);
    }
}
