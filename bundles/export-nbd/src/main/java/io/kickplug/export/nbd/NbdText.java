package io.kickplug.export.nbd;

import io.kickplug.api.text.JsonText;
import java.util.ArrayList;
import java.util.List;

/** The text and JSON of the {@code kp:nbd-*} commands. */
public final class NbdText {

    private NbdText() {
    }

    /** The transmission flags as words: ro or rw, then flush, fua, trim, zeroes, multi-conn. */
    static String flags(int f) {
        List<String> words = new ArrayList<>();
        words.add((f & Nbd.FLAG_READ_ONLY) != 0 ? "ro" : "rw");
        if ((f & Nbd.FLAG_SEND_FLUSH) != 0) {
            words.add("flush");
        }
        if ((f & Nbd.FLAG_SEND_FUA) != 0) {
            words.add("fua");
        }
        if ((f & Nbd.FLAG_SEND_TRIM) != 0) {
            words.add("trim");
        }
        if ((f & Nbd.FLAG_SEND_WRITE_ZEROES) != 0) {
            words.add("zeroes");
        }
        if ((f & Nbd.FLAG_CAN_MULTI_CONN) != 0) {
            words.add("multi-conn");
        }
        return String.join(",", words);
    }

    public static String server(NbdServer.Status s) {
        if (s == null) {
            return "NBD server: not running";
        }
        return "NBD server on " + s.address() + " (max-connections " + (s.maxConnections() == 0 ? "unlimited"
                : Integer.toString(s.maxConnections())) + "): " + s.connections() + " connections, " + s.accepted()
                + " accepted, " + s.refused() + " refused";
    }

    public static String serverJson(NbdServer.Status s) {
        if (s == null) {
            return "{\"running\":false}";
        }
        return "{\"running\":true,\"address\":" + JsonText.quote(s.address()) + ",\"max_connections\":"
                + s.maxConnections() + ",\"connections\":" + s.connections() + ",\"accepted\":" + s.accepted()
                + ",\"refused\":" + s.refused() + "}";
    }

    public static String exports(List<NbdService.ExportView> views) {
        if (views.isEmpty()) {
            return "no NBD exports";
        }
        StringBuilder b = new StringBuilder(String.format("%-12s %-12s %14s %-32s %5s %10s  %s", "EXPORT", "DISK",
                "SIZE", "FLAGS", "CONNS", "REQUESTS", "URI"));
        for (NbdService.ExportView v : views) {
            NbdExport.Status s = v.status();
            b.append(String.format("%n%-12s %-12s %14d %-32s %5d %10d  %s", s.name(), s.disk(), s.sizeBytes(),
                    flags(s.flags()), s.connections(), s.requests(), v.uri()));
        }
        return b.toString();
    }

    /** {@code {"exports":[EXPORT...]}}, as {@code kp:vhost-list --json} names its list. */
    public static String exportsJson(List<NbdService.ExportView> views) {
        StringBuilder b = new StringBuilder("{\"exports\":[");
        for (int i = 0; i < views.size(); i++) {
            if (i > 0) {
                b.append(',');
            }
            b.append(exportJson(views.get(i)));
        }
        return b.append("]}").toString();
    }

    public static String exportJson(NbdService.ExportView v) {
        NbdExport.Status s = v.status();
        return "{\"name\":" + JsonText.quote(s.name()) + ",\"disk\":" + JsonText.quote(s.disk()) + ",\"writable\":"
                + s.writable() + ",\"size_bytes\":" + s.sizeBytes() + ",\"flags\":" + s.flags() + ",\"flag_names\":"
                + JsonText.quote(flags(s.flags())) + ",\"connections\":" + s.connections() + ",\"requests\":"
                + s.requests() + ",\"errors\":" + s.errors() + ",\"bytes_read\":" + s.bytesRead()
                + ",\"bytes_written\":" + s.bytesWritten() + ",\"uri\":" + JsonText.quote(v.uri()) + "}";
    }

    public static String export(NbdService.ExportView v) {
        NbdExport.Status s = v.status();
        return "exported disk " + s.disk() + " as " + s.name() + " (" + flags(s.flags()) + ", " + s.sizeBytes()
                + " bytes): " + v.uri();
    }
}
