package io.kickplug.launcher;

import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What a daemon starts only after it is ready (its statements have run and its control socket is open):
 * bundles a storage daemon does not need to serve exports, unless its statements use one of their commands or
 * a command that references a service they provide ({@link #waiting}).
 * They start right after the ready line, so every command is there a moment later; the time to ready
 * (measured: README, "Running as a service") no longer includes them.
 */
final class LazyStart {

    static final String GOGO_SHELL_NAME = "org.apache.felix.gogo.shell";
    static final String GOGO_COMMAND_NAME = "org.apache.felix.gogo.command";

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

    /**
     * Of {@link #LATER}, what a daemon with a control socket does not start after ready but only when a statement
     * (of its control socket's clients) uses one of their functions ({@link #neededNow}): the console bundles. They
     * bring only Gogo's built-ins ({@code echo}, {@code each}, {@code lb}, ...) and their formatting, which no
     * kp: command and no kept setting needs; gogo.shell's start job would keep its thread ("Gogo shell") for the
     * daemon's life.
     */
    static final Set<String> ON_DEMAND = Set.of(GOGO_SHELL_NAME, GOGO_COMMAND_NAME);

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
     * The bundles of {@link #LATER} that may wait until the daemon is ready; the others start before its
     * statements run. One starts before them when
     * <ul>
     * <li>one of its commands is used ({@link #CONSOLE_COMMANDS} for the console bundles; gogo.shell also
     * whenever gogo.command starts, for its converters);</li>
     * <li>the component of a used command, of any bundle, references a service interface one of its components
     * provides: kp:io (a command of the shell bundle) needs the guest bundle's {@code GuestWorkloads};</li>
     * <li>a bundle that starts before the statements for these reasons references one it provides.</li>
     * </ul>
     * Only used commands count, not everything their services need in turn: kp:attach needs the disk manager,
     * whose component binds the poll policy and the notification strategies when they come, as after any hot
     * swap; a command that needs one of them says so with a reference of its own (kp:poll, kp:notify).
     *
     * @param bundles what the component descriptions of the project bundles say, by symbolic name
     * @param words the statements' {@link #words}
     */
    static Set<String> waiting(Map<String, CommandComponents.Descriptions> bundles, Set<String> words) {
        Set<String> now = new HashSet<>();
        Set<String> needed = new HashSet<>();
        for (CommandComponents.Descriptions d : bundles.values()) {
            for (CommandComponents.Command c : d.commands()) {
                if (uses(List.of(c), words)) {
                    needed.addAll(c.references());
                }
            }
        }
        for (String name : LATER) {
            if (uses(CONSOLE_COMMANDS.getOrDefault(name, descriptions(bundles, name).commands()), words)) {
                now.add(name);
            }
        }
        boolean grew = true;
        while (grew) {
            grew = false;
            for (String name : now) {
                needed.addAll(descriptions(bundles, name).references());
            }
            for (String name : LATER) {
                if (!now.contains(name) && !Collections.disjoint(descriptions(bundles, name).provides(), needed)) {
                    now.add(name);
                    grew = true;
                }
            }
        }
        if (now.contains(GOGO_COMMAND)) {
            now.add(GOGO_SHELL);
        }
        Set<String> waiting = new HashSet<>(LATER);
        waiting.removeAll(now);
        return waiting;
    }

    private static final String GOGO_SHELL = GOGO_SHELL_NAME;
    private static final String GOGO_COMMAND = GOGO_COMMAND_NAME;

    /**
     * Of the bundles of {@link #ON_DEMAND}, those that {@code statement} needs: one whose functions it names, and
     * gogo.shell with gogo.command (its converters format what gogo.command returns).
     */
    static Set<String> neededNow(String statement) {
        Set<String> words = words(List.of(statement));
        Set<String> out = new HashSet<>();
        for (String name : ON_DEMAND) {
            if (uses(CONSOLE_COMMANDS.getOrDefault(name, List.of()), words)) {
                out.add(name);
            }
        }
        if (out.contains(GOGO_COMMAND)) {
            out.add(GOGO_SHELL);
        }
        return out;
    }

    private static CommandComponents.Descriptions descriptions(Map<String, CommandComponents.Descriptions> bundles,
            String name) {
        return bundles.getOrDefault(name, CommandComponents.Descriptions.NONE);
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
