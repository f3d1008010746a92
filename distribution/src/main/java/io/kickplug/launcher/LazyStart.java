package io.kickplug.launcher;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a daemon starts only after it is ready (its statements have run and its control socket is open):
 * bundles a storage daemon does not need to serve exports, unless its statements use one of their commands.
 * They start right after the ready line, so every command is there a moment later; the time to ready
 * (measured: README, "Running as a service") no longer includes them.
 */
final class LazyStart {

    /**
     * The simulated guest (vCPUs, fio runner, benches), the completion-batching strategies (disks use
     * {@code immediate} until they bind, as after any hot swap), the poll policy, the console and the
     * built-in shell commands, metatype and the log service metatype needs.
     */
    static final Set<String> LATER = Set.of(
            "io.kickplug.guest",
            "io.kickplug.batching",
            "io.kickplug.poll",
            "org.apache.felix.gogo.shell",
            "org.apache.felix.gogo.command",
            "org.apache.felix.metatype",
            "org.apache.felix.log");

    /**
     * Bundles whose commands the launcher cannot list without starting them (Gogo's built-ins such as
     * {@code echo}, {@code each}, {@code lb}): they wait only when the daemon has no statements to run.
     */
    static final Set<String> UNLISTED_COMMANDS = Set.of("org.apache.felix.gogo.shell", "org.apache.felix.gogo.command");

    private static final Pattern WORD = Pattern.compile("[A-Za-z_][\\w.-]*(?::[\\w.-]+)?");

    private LazyStart() {
    }

    /** Every word of the statements that could name a command: {@code scope:function} and bare words. */
    static Set<String> words(List<String> statements) {
        Set<String> out = new HashSet<>();
        for (String s : statements) {
            Matcher m = WORD.matcher(s);
            while (m.find()) {
                String w = m.group();
                out.add(w);
                int colon = w.indexOf(':');
                if (colon >= 0) {
                    out.add(w.substring(colon + 1));
                }
            }
        }
        return out;
    }

    /**
     * True when {@code symbolicName} may wait: it is in {@link #LATER}, none of its commands is used, and its
     * commands are known or there are no statements ({@code words} empty).
     */
    static boolean later(String symbolicName, List<CommandComponents.Command> commands, Set<String> words) {
        if (!LATER.contains(symbolicName)) {
            return false;
        }
        if (UNLISTED_COMMANDS.contains(symbolicName) && !words.isEmpty()) {
            return false;
        }
        for (CommandComponents.Command c : commands) {
            for (String f : c.functions()) {
                if (words.contains(c.scope() + ":" + f) || words.contains(f)) {
                    return false;
                }
            }
        }
        return true;
    }
}
