package io.kickplug.itest;

import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;

/** Bundle look-ups inside the framework (in the Pax Exam probe: OSGi types only). */
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
}
