package io.kickplug.qmp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.qmp.testkit.QmpClient;
import io.kickplug.virtio.testkit.Await;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** The QMP monitor over a real Unix socket: greeting, negotiation mode, several clients, events, bad input. */
@Timeout(30)
class QmpMonitorTest {

    private final Fixture f = new Fixture();
    private final QmpEngine engine = f.engine();
    private final AtomicInteger quits = new AtomicInteger();
    private QmpMonitors monitors;
    @TempDir
    Path dir;
    private Path socket;

    @BeforeEach
    @SuppressWarnings("unchecked")
    void start() throws IOException {
        Map<String, Object> version = (Map<String, Object>) engine.execute(Map.of("execute", "query-version"), false)
                .response().get("return");
        monitors = new QmpMonitors(engine::execute, version, quits::incrementAndGet);
        socket = dir.resolve("qmp.sock");
        monitors.start(socket);
    }

    @AfterEach
    void stop() {
        monitors.close();
        f.close();
    }

    @SuppressWarnings("unchecked")
    private static String errorClass(Map<String, Object> r) {
        Map<String, Object> e = (Map<String, Object>) r.get("error");
        return e == null ? null : (String) e.get("class");
    }

    @SuppressWarnings("unchecked")
    private static String desc(Map<String, Object> r) {
        return (String) ((Map<String, Object>) r.get("error")).get("desc");
    }

    @Test
    @SuppressWarnings("unchecked")
    void greetingAndCapabilitiesNegotiation() throws IOException {
        try (QmpClient c = QmpClient.connect(socket)) {
            Map<String, Object> qmp = (Map<String, Object>) c.greeting().get("QMP");
            assertEquals(List.of("oob"), qmp.get("capabilities"));
            Map<String, Object> version = (Map<String, Object>) qmp.get("version");
            assertEquals(7L, ((Map<String, Object>) version.get("qemu")).get("major"));
            Map<String, Object> r = c.command("{\"execute\":\"query-version\",\"id\":1}");
            assertEquals("CommandNotFound", errorClass(r));
            assertEquals("Expecting capabilities negotiation with 'qmp_capabilities'", desc(r));
            assertEquals(1L, r.get("id"));
            assertEquals(Map.of(), c.command("{\"execute\":\"qmp_capabilities\"}").get("return"));
            r = c.command("{\"execute\":\"qmp_capabilities\"}");
            assertEquals("CommandNotFound", errorClass(r));
            assertEquals("Capabilities negotiation is already complete, command ignored", desc(r));
            assertTrue(c.command("{\"execute\":\"query-version\"}").containsKey("return"));
        }
    }

    @Test
    void malformedJsonAnswersOneErrorAndTheConnectionGoesOn() throws IOException {
        try (QmpClient c = QmpClient.negotiated(socket)) {
            c.send("{\"execute\": }\n");
            Map<String, Object> r = c.response();
            assertEquals("GenericError", errorClass(r));
            assertTrue(desc(r).startsWith("JSON parse error, "), desc(r));
            c.send("garbage\n");
            assertTrue(desc(c.response()).startsWith("JSON parse error, "));
            c.send("]\n");
            assertTrue(desc(c.response()).startsWith("JSON parse error, "));
            assertEquals("QMP input must be a JSON object", desc(c.command("[1, 2]")));
            // a command split over lines is one command
            c.send("{\"execute\":\n \"query-block-exports\"\n}\n");
            assertEquals(List.of(), c.response().get("return"));
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void eventsReachEveryNegotiatedClient() throws IOException {
        try (QmpClient a = QmpClient.negotiated(socket); QmpClient b = QmpClient.negotiated(socket);
                QmpClient fresh = QmpClient.connect(socket)) {
            assertTrue(a.command("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\","
                    + "\"node-name\":\"n0\"}}").containsKey("return"));
            assertTrue(b.command("{\"execute\":\"block-export-add\",\"arguments\":{\"type\":\"vhost-user-blk\","
                    + "\"id\":\"e0\",\"node-name\":\"n0\",\"writable\":true,\"addr\":{\"type\":\"unix\",\"path\":\""
                    + dir.resolve("vu.sock") + "\"}}}").containsKey("return"));
            assertEquals(Map.of(), a.command("{\"execute\":\"block-export-del\",\"arguments\":{\"id\":\"e0\"}}")
                    .get("return"));
            for (QmpClient c : List.of(a, b)) {
                Map<String, Object> e = c.event("BLOCK_EXPORT_DELETED");
                assertEquals(Map.of("id", "e0"), e.get("data"));
                assertTrue(((Map<String, Object>) e.get("timestamp")).containsKey("microseconds"));
            }
            // a client still negotiating gets no events: its next line is its answer
            assertTrue(fresh.command("{\"execute\":\"qmp_capabilities\"}").containsKey("return"));
            assertTrue(fresh.events().isEmpty(), fresh.events()::toString);
        }
    }

    @Test
    void aClientGoneMidCommandLeavesTheMonitorServing() throws IOException {
        QmpClient gone = QmpClient.negotiated(socket);
        gone.send("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\",\"node-name\":\"n1\"}}\n");
        gone.close();
        try (QmpClient c = QmpClient.negotiated(socket)) {
            Await.await(() -> {
                try {
                    return Json.write(c.command("{\"execute\":\"query-named-block-nodes\"}")).contains("\"n1\"");
                } catch (IOException e) {
                    throw new IllegalStateException(e);
                }
            }, "the command of the client that left completes");
            assertEquals(1, f.disks.list().size());
        }
    }

    @Test
    void quitIsAnsweredThenTheRuntimeEnds() throws IOException {
        try (QmpClient c = QmpClient.negotiated(socket)) {
            assertEquals(Map.of(), c.command("{\"execute\":\"quit\"}").get("return"));
            Await.await(() -> quits.get() == 1, "quit runs after the reply");
        }
    }

    @Test
    void stopDisconnectsClientsAndRemovesTheSocket() throws IOException {
        QmpClient c = QmpClient.negotiated(socket);
        assertEquals(Map.of(socket.toAbsolutePath().normalize(), 1), monitors.list());
        assertThrows(IllegalStateException.class, () -> monitors.start(socket));
        monitors.stop(socket);
        assertNull(c.readLine(), "the client is disconnected");
        c.close();
        assertFalse(Files.exists(socket));
        assertTrue(monitors.list().isEmpty());
        // a regular file in the way is left alone
        Files.writeString(socket, "x");
        assertThrows(IOException.class, () -> monitors.start(socket));
        assertEquals("x", Files.readString(socket));
    }
}
