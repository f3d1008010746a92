package io.kickplug.shell;

import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.transport.ExportStatus;
import java.util.ArrayList;
import java.util.List;

/** The text table of {@code kp:disks}. */
public final class DiskTable {
    private static final String[] HEADER = {"NAME", "SIZE", "BACKEND", "TRANSPORT", "QUEUES", "STATUS", "COMPLETED", "LOCK",
        "MAPPING"};

    private DiskTable() {
    }

    public static String format(List<DiskInfo> disks) {
        return format(disks, List.of());
    }

    /**
     * The table, then one line per export of a listed disk:
     * {@code "d0 export vhost-user: /run/d0.sock (connected)"}.
     */
    public static String format(List<DiskInfo> disks, List<ExportStatus.Export> exports) {
        String table = table(disks);
        StringBuilder out = new StringBuilder(table);
        for (ExportStatus.Export e : exports) {
            if (disks.stream().anyMatch(d -> d.name().equals(e.disk()))) {
                out.append('\n').append(e.disk()).append(" export ").append(e.kind()).append(": ")
                        .append(e.address()).append(" (").append(e.state()).append(')');
            }
        }
        return out.toString();
    }

    private static String table(List<DiskInfo> disks) {
        if (disks.isEmpty()) {
            return "no disks attached";
        }
        List<String[]> rows = new ArrayList<>();
        rows.add(HEADER);
        for (DiskInfo d : disks) {
            rows.add(new String[] {
                d.name(),
                Sizes.format(d.sizeBytes()),
                d.backend() + (d.readOnly() ? " (ro)" : ""),
                d.transport().label(),
                d.numQueues() + "x" + d.queueSize(),
                DeviceStatusText.describe(d.deviceStatus()),
                Long.toString(d.requestsCompleted()),
                d.trackedLock().label(),
                AttachArgs.formatMapping(d.mapping()),
            });
        }
        int[] width = new int[HEADER.length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        StringBuilder out = new StringBuilder();
        for (String[] row : rows) {
            StringBuilder line = new StringBuilder();
            for (int i = 0; i < row.length; i++) {
                // Numbers right-aligned, text left-aligned.
                boolean right = i == 6 && row != HEADER;
                String cell = right ? pad(row[i], width[i], true) : pad(row[i], width[i], false);
                line.append(cell);
                if (i < row.length - 1) {
                    line.append("  ");
                }
            }
            out.append(line.toString().stripTrailing()).append('\n');
        }
        return out.substring(0, out.length() - 1);
    }

    private static String pad(String s, int width, boolean right) {
        String spaces = " ".repeat(width - s.length());
        return right ? spaces + s : s + spaces;
    }
}
