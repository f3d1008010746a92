package io.kickplug.launcher;

import java.util.HashSet;
import java.util.List;
import java.util.Map;
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
     * The Gogo functions of the console bundles, which register them from their activators (not from component
     * descriptions the launcher could read): gogo.shell 1.1.4 ({@code Builtin}, {@code Procedural}, {@code Posix},
     * {@code Telnet}, {@code Shell}, scope {@code gogo}) and gogo.command 1.1.2 ({@code Basic}, {@code Inspect},
     * {@code Files}, scope {@code felix}). {@code ConsoleFunctionsIT} checks them against the jars of the
     * distribution. gogo.shell also brings the converters that format OSGi objects; it starts with gogo.command
     * whenever that one is used.
     */
    static final Map<String, List<CommandComponents.Command>> CONSOLE_COMMANDS = Map.of(
            "org.apache.felix.gogo.shell", List.of(new CommandComponents.Command("gogo.shell", "gogo", List.of(
                    "format", "getopt", "new", "set", "tac", "type",
                    "each", "if", "not", "throw", "try", "until", "while",
                    "cat", "echo", "grep", "telnetd", "gosh", "sh", "source", "history"))),
            "org.apache.felix.gogo.command", List.of(new CommandComponents.Command("gogo.command", "felix", List.of(
                    "bundlelevel", "frameworklevel", "headers", "help", "install", "lb", "log", "refresh",
                    "resolve", "start", "stop", "uninstall", "update", "which", "inspect", "cd", "ls"))));

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
     * True when {@code symbolicName} may wait: it is in {@link #LATER} and none of its commands (for the console
     * bundles, {@link #CONSOLE_COMMANDS}; gogo.shell also for gogo.command's) is used by the statements.
     */
    static boolean later(String symbolicName, List<CommandComponents.Command> commands, Set<String> words) {
        if (!LATER.contains(symbolicName)) {
            return false;
        }
        List<CommandComponents.Command> used = CONSOLE_COMMANDS.getOrDefault(symbolicName, commands);
        if (symbolicName.equals("org.apache.felix.gogo.shell")
                && uses(CONSOLE_COMMANDS.get("org.apache.felix.gogo.command"), words)) {
            return false;
        }
        return !uses(used, words);
    }

    private static boolean uses(List<CommandComponents.Command> commands, Set<String> words) {
        for (CommandComponents.Command c : commands) {
            for (String f : c.functions()) {
                if (words.contains(c.scope() + ":" + f) || words.contains(f)) {
                    return true;
                }
            }
        }
        return false;
    }
}
