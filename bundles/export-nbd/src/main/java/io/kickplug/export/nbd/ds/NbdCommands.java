package io.kickplug.export.nbd.ds;

import io.kickplug.export.nbd.Listener;
import io.kickplug.export.nbd.NbdService;
import io.kickplug.export.nbd.NbdText;
import io.kickplug.api.text.JsonText;
import java.io.IOException;

/**
 * What the {@code kp:nbd-*} commands do, without OSGi: argument checks, then {@link NbdService}, then text or JSON.
 * Errors are exceptions with one-line messages.
 */
public final class NbdCommands {

    /** Connections at once by default: each may hold up to 40 MiB of request data. */
    public static final int DEFAULT_MAX_CONNECTIONS = 16;
    static final String SERVER_USAGE = "usage: kp:nbd-server [--json] | kp:nbd-server start (--socket PATH | --host H "
            + "[--port P] | --fd N) [--max-connections N] [--json] | kp:nbd-server stop [--json]";

    private NbdCommands() {
    }

    /** {@code kp:nbd-server}: the status, or {@code start}, or {@code stop}. Empty strings are options not given. */
    public static String server(NbdService service, String socket, String host, String port, String fd,
            String maxConnections, boolean json, String... action) throws IOException {
        if (action.length > 1) {
            throw new IllegalArgumentException(SERVER_USAGE);
        }
        String what = action.length == 0 ? "status" : action[0];
        boolean options = !socket.isEmpty() || !host.isEmpty() || !port.isEmpty() || !fd.isEmpty()
                || !maxConnections.isEmpty();
        switch (what) {
            case "status" -> {
                if (options) {
                    throw new IllegalArgumentException("options need 'start'; " + SERVER_USAGE);
                }
                return json ? NbdText.serverJson(service.status()) : NbdText.server(service.status());
            }
            case "stop" -> {
                if (options) {
                    throw new IllegalArgumentException("'stop' takes no options but --json; " + SERVER_USAGE);
                }
                service.stop();
                return json ? "{\"stopped\":true}" : "NBD server stopped";
            }
            case "start" -> {
                Listener listener = listener(socket, host, port, fd);
                int max = maxConnections.isEmpty() ? DEFAULT_MAX_CONNECTIONS
                        : number("--max-connections", maxConnections, 0, 65535);
                var status = service.start(listener, max);
                return json ? NbdText.serverJson(status) : NbdText.server(status);
            }
            default -> throw new IllegalArgumentException("unknown action '" + what + "'; " + SERVER_USAGE);
        }
    }

    static Listener listener(String socket, String host, String port, String fd) {
        int kinds = (socket.isEmpty() ? 0 : 1) + (host.isEmpty() ? 0 : 1) + (fd.isEmpty() ? 0 : 1);
        if (kinds != 1) {
            throw new IllegalArgumentException("give exactly one of --socket, --host or --fd; " + SERVER_USAGE);
        }
        if (!port.isEmpty() && host.isEmpty()) {
            throw new IllegalArgumentException("--port goes with --host; " + SERVER_USAGE);
        }
        if (!socket.isEmpty()) {
            return Listener.unix(socket);
        }
        if (!host.isEmpty()) {
            return Listener.tcp(host, port.isEmpty() ? 10809 : number("--port", port, 0, 65535));
        }
        return Listener.inherited(number("--fd", fd, 0, Integer.MAX_VALUE));
    }

    private static int number(String option, String value, int min, int max) {
        int n;
        try {
            n = Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(option + " " + value + " is not a number");
        }
        if (n < min || n > max) {
            throw new IllegalArgumentException(option + " " + value + " is not in " + min + ".." + max);
        }
        return n;
    }

    /** {@code kp:nbd-export [--name EXPORT] [--writable] [--json] DISK}. */
    static final String EXPORT_USAGE = "usage: kp:nbd-export [--json] [--name EXPORT] [--writable] DISK";
    static final String STOP_USAGE = "usage: kp:nbd-export-stop [--json] EXPORT";

    /**
     * The operands of a {@code _main} command after the function's name, which Gogo runtime passes first (a caller
     * outside Gogo may pass none).
     */
    static String[] afterName(String... operands) {
        return operands.length == 0 ? operands : java.util.Arrays.copyOfRange(operands, 1, operands.length);
    }

    /** The one operand after the function's name, or the usage as an error. */
    static String one(String[] operands, String usage) {
        String[] rest = afterName(operands);
        if (rest.length != 1 || rest[0] == null) {
            throw new IllegalArgumentException(usage);
        }
        return rest[0];
    }

    public static String export(NbdService service, String name, boolean writable, boolean json, String disk) {
        NbdService.ExportView v = service.export(disk, name, writable);
        return json ? NbdText.exportJson(v) : NbdText.export(v);
    }

    /** {@code kp:nbd-export-stop [--json] EXPORT}. */
    public static String stopExport(NbdService service, boolean json, String name) {
        service.stopExport(name);
        return json ? "{\"stopped\":" + JsonText.quote(name) + "}" : "stopped NBD export " + name;
    }

    /** {@code kp:nbd-list [--json]}. */
    public static String list(NbdService service, boolean json) {
        return json ? NbdText.exportsJson(service.list()) : NbdText.exports(service.list());
    }
}
