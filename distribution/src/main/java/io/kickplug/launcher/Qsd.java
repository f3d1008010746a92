package io.kickplug.launcher;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;

/**
 * qemu-storage-daemon's options (storage-daemon/qemu-storage-daemon.c) turned into the QMP commands QSD runs for
 * them, each as a Gogo statement {@code kp:qmp [--keyval] 'JSON'} for the QMP bundle: {@code --blockdev} is
 * {@code blockdev-add}, {@code --export} {@code block-export-add}, {@code --object} {@code object-add},
 * {@code --nbd-server} {@code nbd-server-start}; {@code --chardev} (a listening Unix socket) with
 * {@code --monitor} is {@code kp:qmp-monitor 'PATH'}. Each value is QEMU's {@code KEY=VALUE,...} ({@link Keyval},
 * scalars as strings: {@code --keyval} has the QMP bundle coerce them per type) or, starting with {@code {}, a JSON
 * object taken as typed. {@code --chardev} is QemuOpts (no nesting; a bare key after the first means
 * {@code key=on}). Not thread-safe: one translation per command line, in order.
 */
final class Qsd {

    /** The options that take a value and become statements, in QSD's spelling. */
    static final Set<String> VALUED = Set.of("--blockdev", "--chardev", "--export", "--monitor", "--nbd-server",
            "--object");

    /** An option that cannot be translated; the message is the line to print (QSD's wording where it has one). */
    static final class QsdException extends Exception {
        private static final long serialVersionUID = 1L;

        QsdException(String message) {
            super(message);
        }
    }

    /** One translated option: the statement and the option as the user wrote it (for its error line). */
    record Statement(String text, String label) {
    }

    /** The chardevs defined so far: id to socket path. */
    private final Map<String, String> chardevs = new LinkedHashMap<>();

    /**
     * Translates {@code option} (one of {@link #VALUED}) with {@code value}.
     *
     * @return the statement, or {@code null} for an option that only defines something ({@code --chardev})
     */
    Statement translate(String option, String value) throws QsdException {
        String label = option + " " + value;
        try {
            String text = switch (option) {
                case "--blockdev" -> qmp("blockdev-add", arguments(value, "driver"));
                case "--export" -> qmp("block-export-add", arguments(value, "type"));
                case "--object" -> object(value);
                case "--nbd-server" -> nbdServer(arguments(value, null));
                case "--chardev" -> chardev(value);
                case "--monitor" -> monitor(arguments(value, "chardev"));
                default -> throw new QsdException("unrecognized option '" + option + "'");
            };
            return text == null ? null : new Statement(text, label);
        } catch (QsdException e) {
            throw new QsdException(label + ": " + e.getMessage());
        }
    }

    /** The arguments of a QMP command: a keyval tree (strings) or a JSON object (typed). */
    private record Arguments(Map<String, Object> tree, boolean keyval) {
    }

    /** qobject_input_visitor_new_str: JSON when the text starts with '{', else keyval with {@code implied}. */
    private static Arguments arguments(String value, String implied) throws QsdException {
        if (value.startsWith("{")) {
            Object parsed;
            try {
                parsed = Json.parse(value);
            } catch (IllegalArgumentException e) {
                throw new QsdException("JSON parse error, " + e.getMessage());
            }
            if (!(parsed instanceof Map)) {
                throw new QsdException("JSON parse error, a JSON object is expected");
            }
            @SuppressWarnings("unchecked")
            Map<String, Object> tree = (Map<String, Object>) parsed;
            return new Arguments(tree, false);
        }
        try {
            return new Arguments(Keyval.parse(value, implied), true);
        } catch (Keyval.KeyvalException e) {
            throw new QsdException(e.getMessage());
        }
    }

    private static String qmp(String command, Arguments args) {
        Map<String, Object> cmd = new LinkedHashMap<>();
        cmd.put("execute", command);
        cmd.put("arguments", args.tree());
        return "kp:qmp " + (args.keyval() ? "--keyval " : "") + gogoLiteral(Json.write(cmd));
    }

    /**
     * JSON text as one Gogo single-quoted word. Gogo takes everything between single quotes as it is (no escapes,
     * no expansion of {@code $}), so only a single quote needs care: outside strings JSON has none, inside one it
     * may be written {@code \u0027}. {@link Json#write} leaves no raw line breaks.
     */
    static String gogoLiteral(String json) {
        return "'" + json.replace("'", "\\u0027") + "'";
    }

    private static String object(String value) throws QsdException {
        Arguments args = arguments(value, "qom-type");
        if ("help".equals(args.tree().get("qom-type")) || args.tree().containsKey("help")) {
            throw new QsdException("--object help is not supported");
        }
        return qmp("object-add", args);
    }

    /**
     * {@code --nbd-server} is NbdServerOptions, whose {@code addr} is a flat SocketAddress
     * ({@code addr.type=unix,addr.path=...}); QMP's {@code nbd-server-start} takes the legacy form
     * {@code {"type":"unix","data":{"path":...}}}.
     */
    private static String nbdServer(Arguments args) {
        Object addr = args.tree().get("addr");
        if (addr instanceof Map<?, ?> flat && flat.get("type") != null) {
            Map<String, Object> data = new LinkedHashMap<>();
            flat.forEach((k, v) -> {
                if (!"type".equals(k)) {
                    data.put(String.valueOf(k), v);
                }
            });
            Map<String, Object> legacy = new LinkedHashMap<>();
            legacy.put("type", flat.get("type"));
            legacy.put("data", data);
            args.tree().put("addr", legacy);
        }
        return qmp("nbd-server-start", args);
    }

    /** {@code --chardev socket,id=ID,path=PATH,server=on,wait=off}: remembered for {@code --monitor}. */
    private String chardev(String value) throws QsdException {
        Map<String, String> opts = qemuOpts(value, "backend");
        String id = opts.remove("id");
        if (id == null) {
            throw new QsdException("chardev: no id specified");
        }
        String backend = opts.remove("backend");
        if (backend == null) {
            throw new QsdException("chardev: \"" + id + "\" missing backend");
        }
        if (!backend.equals("socket")) {
            throw new QsdException("chardev backend '" + backend + "' is not supported (only socket)");
        }
        String path = opts.remove("path");
        if (path == null) {
            throw new QsdException("chardev: only a Unix socket (path=) is supported");
        }
        String server = opts.remove("server");
        if (server == null || !onOff("server", server)) {
            throw new QsdException("chardev: only a listening socket (server=on) is supported");
        }
        String wait = opts.remove("wait");
        if (wait != null) {
            onOff("wait", wait);
        }
        if (!opts.isEmpty()) {
            throw new QsdException("Invalid parameter '" + opts.keySet().iterator().next() + "'");
        }
        if (chardevs.containsKey(id)) {
            throw new QsdException("attempt to add duplicate property '" + id + "' to object (type 'container')");
        }
        if (path.contains("'")) {
            throw new QsdException("a socket path with ' is not supported");
        }
        chardevs.put(id, path);
        return null;
    }

    private static boolean onOff(String key, String value) throws QsdException {
        return switch (value) {
            case "on", "yes", "true", "y" -> true;
            case "off", "no", "false", "n" -> false;
            default -> throw new QsdException("Parameter '" + key + "' expects 'on' or 'off'");
        };
    }

    /** {@code --monitor [chardev=]ID[,mode=control][,pretty=on|off][,id=ID]} (MonitorOptions). */
    private String monitor(Arguments args) throws QsdException {
        Map<String, Object> tree = new LinkedHashMap<>(args.tree());
        Object chardev = tree.remove("chardev");
        Object mode = tree.remove("mode");
        Object pretty = tree.remove("pretty");
        tree.remove("id");
        if (!tree.isEmpty()) {
            throw new QsdException("Parameter '" + tree.keySet().iterator().next() + "' is unexpected");
        }
        if (!(chardev instanceof String id)) {
            throw new QsdException("Parameter 'chardev' is missing");
        }
        if (mode != null && !"control".equals(mode)) {
            throw new QsdException("Only QMP is supported");
        }
        if (pretty instanceof String p) {
            onOff("pretty", p);
        }
        String path = chardevs.get(id);
        if (path == null) {
            throw new QsdException("chardev \"" + id + "\" not found");
        }
        return "kp:qmp-monitor '" + path + "'";
    }

    /**
     * QemuOpts (util/qemu-option.c): {@code key=value} items, {@code ,,} a comma, the first item without
     * {@code =} the implied key's value, a later one {@code key} meaning {@code key=on} ({@code nokey}:
     * {@code key=off}).
     */
    static Map<String, String> qemuOpts(String params, String implied) throws QsdException {
        Map<String, String> out = new LinkedHashMap<>();
        int i = 0;
        boolean first = true;
        while (i < params.length()) {
            int end = i;
            while (end < params.length() && params.charAt(end) != '=' && params.charAt(end) != ',') {
                end++;
            }
            String key = params.substring(i, end);
            String value;
            if (end < params.length() && params.charAt(end) == '=') {
                StringBuilder v = new StringBuilder();
                int j = end + 1;
                while (j < params.length()) {
                    if (params.charAt(j) == ',') {
                        if (j + 1 < params.length() && params.charAt(j + 1) == ',') {
                            v.append(',');
                            j += 2;
                            continue;
                        }
                        break;
                    }
                    v.append(params.charAt(j++));
                }
                value = v.toString();
                i = j + 1;
            } else {
                i = end + 1;
                if (first && implied != null) {
                    value = key;
                    key = implied;
                } else if (key.startsWith("no") && key.length() > 2) {
                    key = key.substring(2);
                    value = "off";
                } else {
                    value = "on";
                }
            }
            first = false;
            if (key.isEmpty()) {
                throw new QsdException("Invalid parameter ''");
            }
            out.put(key, value);
        }
        return out;
    }

    /** The options of a command line that are QSD's own and imply a daemon. */
    static boolean isQsdOption(String arg) {
        String name = arg.contains("=") ? arg.substring(0, arg.indexOf('=')) : arg;
        return VALUED.contains(name) || name.equals("--daemonize");
    }
}
