package io.kickplug.vhost.server;

import io.kickplug.api.text.JsonText;
import io.kickplug.vhost.backend.SessionStatus;
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
            SessionStatus c = s.connection();
            sb.append(String.format("%-12s %-10s %-8d %-7s %-7s %-9s %-9s %-9s %s%n", s.name(), state(s), s.sessions(),
                    c == null ? "-" : Integer.toString(c.runningQueues()),
                    c == null ? "-" : Long.toString(c.memoryBytes() >> 20),
                    c == null ? "-" : Long.toString(c.kicks()), c == null ? "-" : Long.toString(c.interrupts()),
                    c == null ? "-" : Long.toString(c.refusals()), s.socket()));
        }
        for (VhostUserServer.Status s : list) {
            SessionStatus c = s.connection();
            if (c != null) {
                sb.append(String.format("%s: %s, features 0x%x, protocol features 0x%x, %d memory regions%s%s%s%s%n",
                        s.name(), s.peer(), c.features(), c.protocolFeatures(), c.memoryRegions(),
                        c.pollQueues().isEmpty() ? "" : ", no interrupt (NOFD) on queues " + c.pollQueues(),
                        c.pagesCarried() == 0 ? "" : ", " + c.pagesCarried()
                                + " dirty-log pages carried from an earlier session",
                        c.needsReset() ? ", NEEDS RESET" : "",
                        c.lastRefusal() == null ? "" : ", last refused: " + c.lastRefusal()));
            }
            if (s.pendingMarks() > 0) {
                sb.append(String.format("%s: %d dirty-log pages an earlier session left uncollected wait for the next"
                        + " session's log%n", s.name(), s.pendingMarks()));
            }
        }
        return sb.toString().stripTrailing();
    }

    /**
     * {@code kp:vhost-list --json} (one line): {@code {"exports":[{"disk","socket","state","sessions","rejected",
     * "peer","pending_marks","connection":null|{"features","protocol_features","memory_regions","memory_bytes",
     * "running_queues","poll_queues","messages","refusals","kicks","interrupts","activations","needs_reset",
     * "last_refusal","pages_carried"}}]}}.
     */
    public static String json(List<VhostUserServer.Status> list) {
        StringBuilder sb = new StringBuilder("{\"exports\":[");
        for (int i = 0; i < list.size(); i++) {
            VhostUserServer.Status s = list.get(i);
            SessionStatus c = s.connection();
            sb.append(i == 0 ? "{" : ",{");
            sb.append("\"disk\":").append(JsonText.quote(s.name()))
                    .append(",\"socket\":").append(JsonText.quote(String.valueOf(s.socket())))
                    .append(",\"state\":").append(JsonText.quote(state(s))).append(",\"sessions\":").append(s.sessions())
                    .append(",\"rejected\":").append(s.rejected()).append(",\"peer\":")
                    .append(s.peer() == null ? "null" : JsonText.quote(s.peer())).append(",\"pending_marks\":")
                    .append(s.pendingMarks()).append(",\"connection\":");
            if (c == null) {
                sb.append("null");
            } else {
                sb.append("{\"features\":").append(c.features()).append(",\"protocol_features\":")
                        .append(c.protocolFeatures()).append(",\"memory_regions\":").append(c.memoryRegions())
                        .append(",\"memory_bytes\":").append(c.memoryBytes()).append(",\"running_queues\":")
                        .append(c.runningQueues()).append(",\"poll_queues\":").append(JsonText.quote(c.pollQueues()))
                        .append(",\"messages\":").append(c.messages()).append(",\"refusals\":").append(c.refusals())
                        .append(",\"kicks\":").append(c.kicks()).append(",\"interrupts\":").append(c.interrupts())
                        .append(",\"activations\":").append(c.activations()).append(",\"needs_reset\":")
                        .append(c.needsReset()).append(",\"last_refusal\":")
                        .append(c.lastRefusal() == null ? "null" : JsonText.quote(c.lastRefusal()))
                        .append(",\"pages_carried\":").append(c.pagesCarried()).append('}');
            }
            sb.append('}');
        }
        return sb.append("]}").toString();
    }

    private static String state(VhostUserServer.Status s) {
        SessionStatus c = s.connection();
        if (s.state() == VhostUserServer.State.CONNECTED && c != null && c.runningQueues() > 0) {
            return "running";
        }
        return s.state().name().toLowerCase();
    }
}
