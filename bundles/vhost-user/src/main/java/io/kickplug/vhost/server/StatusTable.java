package io.kickplug.vhost.server;

import io.kickplug.vhost.backend.VhostUserBackend;
import java.util.List;

/** Text for {@code kp:vhost} and {@code kp:vhost-list}. */
public final class StatusTable {

    private StatusTable() {
    }

    public static String format(List<VhostUserServer.Status> list) {
        if (list.isEmpty()) {
            return "no vhost-user exports";
        }
        StringBuilder sb = new StringBuilder();
        sb.append(String.format("%-12s %-10s %-8s %-7s %-7s %-9s %-9s %-9s %s%n", "DISK", "STATE", "SESSIONS", "QUEUES",
                "MEM-MB", "KICKS", "IRQS", "REFUSED", "SOCKET"));
        for (VhostUserServer.Status s : list) {
            VhostUserBackend.Status c = s.connection();
            sb.append(String.format("%-12s %-10s %-8d %-7s %-7s %-9s %-9s %-9s %s%n", s.name(), state(s), s.sessions(),
                    c == null ? "-" : Integer.toString(c.runningQueues()),
                    c == null ? "-" : Long.toString(c.memoryBytes() >> 20),
                    c == null ? "-" : Long.toString(c.kicks()), c == null ? "-" : Long.toString(c.interrupts()),
                    c == null ? "-" : Long.toString(c.refusals()), s.socket()));
        }
        for (VhostUserServer.Status s : list) {
            VhostUserBackend.Status c = s.connection();
            if (c != null) {
                sb.append(String.format("%s: %s, features 0x%x, protocol features 0x%x, %d memory regions%s%s%s%n",
                        s.name(), s.peer(), c.features(), c.protocolFeatures(), c.memoryRegions(),
                        c.pollQueues().isEmpty() ? "" : ", no interrupt (NOFD) on queues " + c.pollQueues(),
                        c.needsReset() ? ", NEEDS RESET" : "",
                        c.lastRefusal() == null ? "" : ", last refused: " + c.lastRefusal()));
            }
        }
        return sb.toString().stripTrailing();
    }

    private static String state(VhostUserServer.Status s) {
        VhostUserBackend.Status c = s.connection();
        if (s.state() == VhostUserServer.State.CONNECTED && c != null && c.runningQueues() > 0) {
            return "running";
        }
        return s.state().name().toLowerCase();
    }
}
