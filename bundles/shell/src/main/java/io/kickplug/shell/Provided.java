package io.kickplug.shell;

/**
 * One plugin service registered now: its kind, its name (the service property of its kind), and the bundle that
 * registered it.
 *
 * @param plugin whether that bundle was installed as a plugin ({@code kp:install}) rather than with the distribution
 */
record Provided(PluginKind kind, String name, String bundle, String version, long bundleId, boolean plugin) {

    /** "io.example.coalesce 1.0.0 [42]" */
    String bundleText() {
        return bundle + " " + version + " [" + bundleId + "]";
    }
}
