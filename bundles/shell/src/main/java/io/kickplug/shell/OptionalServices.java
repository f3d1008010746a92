package io.kickplug.shell;

/**
 * The commands' optional service references (dynamic, greedy): a command that needs one which is away fails
 * with one line naming the bundle to start, instead of the command vanishing with it.
 */
final class OptionalServices {

    private OptionalServices() {
    }

    /**
     * {@code service} itself when bound; otherwise an {@link IllegalStateException} "no WHAT: the BUNDLE bundle is
     * not active".
     *
     * @param what what the service gives, e.g. "simulated guest"
     * @param bundle the symbolic name of the bundle that registers it
     */
    static <T> T require(T service, String what, String bundle) {
        if (service == null) {
            throw new IllegalStateException("no " + what + ": the " + bundle + " bundle is not active");
        }
        return service;
    }
}
