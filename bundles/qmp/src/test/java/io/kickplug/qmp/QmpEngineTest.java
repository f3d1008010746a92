package io.kickplug.qmp;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.blk.RbdImage;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The engine's commands and errors against a real disk manager (QEMU's texts: qapi/qobject-input-visitor.c). */
class QmpEngineTest {

    private final Fixture f = new Fixture();
    private QmpEngine engine = f.engine();
    @TempDir
    Path dir;

    @AfterEach
    void close() {
        f.close();
    }

    private QmpEngine.Reply run(String json) {
        return engine.execute(Json.parse(json), false);
    }

    private QmpEngine.Reply keyval(String json) {
        return engine.execute(Json.parse(json), true);
    }

    /** The return value; fails with the error when the command failed. */
    private Object ok(String json) {
        QmpEngine.Reply r = run(json);
        assertTrue(r.response().containsKey("return"), () -> json + " -> " + Json.write(r.response()));
        return r.response().get("return");
    }

    @SuppressWarnings("unchecked")
    private static String error(QmpEngine.Reply r, String cls) {
        Map<String, Object> e = (Map<String, Object>) r.response().get("error");
        assertTrue(e != null, () -> "expected an error, got " + Json.write(r.response()));
        assertEquals(cls, e.get("class"));
        return (String) e.get("desc");
    }

    private String generic(String json) {
        return error(run(json), "GenericError");
    }

    @Test
    void versionCommandsAndCapabilities() {
        assertEquals(Map.of(), ok("{\"execute\":\"qmp_capabilities\"}"));
        assertEquals("{\"qemu\": {\"micro\": 0, \"minor\": 2, \"major\": 7}, \"package\": \"kickplug 0.1.0.test\"}",
                Json.write(ok("{\"execute\":\"query-version\"}")));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> cmds = (List<Map<String, Object>>) ok("{\"execute\":\"query-commands\"}");
        List<String> names = cmds.stream().map(m -> (String) m.get("name")).toList();
        for (String n : List.of("qmp_capabilities", "query-version", "query-commands", "blockdev-add", "blockdev-del",
                "block-export-add", "block-export-del", "query-block-exports", "query-named-block-nodes",
                "block_resize", "object-add", "object-del", "nbd-server-start", "nbd-server-stop", "quit",
                "x-kickplug-notify", "x-kickplug-swap", "x-kickplug-stats")) {
            assertTrue(names.contains(n), n);
        }
    }

    @Test
    void idIsEchoed() {
        QmpEngine.Reply r = run("{\"execute\":\"query-block-exports\",\"id\":\"abc\"}");
        assertEquals("abc", r.response().get("id"));
        r = run("{\"execute\":\"nope\",\"id\":7}");
        assertEquals(7L, r.response().get("id"));
    }

    @Test
    void requestObjectErrors() {
        assertEquals("QMP input must be a JSON object", generic("[1]"));
        assertEquals("QMP input lacks member 'execute'", generic("{\"arguments\":{}}"));
        assertEquals("QMP input member 'execute' must be a string", generic("{\"execute\":1}"));
        assertEquals("QMP input member 'arguments' must be an object",
                generic("{\"execute\":\"query-version\",\"arguments\":[]}"));
        assertEquals("QMP input member 'foo' is unexpected", generic("{\"execute\":\"query-version\",\"foo\":1}"));
        assertEquals("The command nope has not been found", error(run("{\"execute\":\"nope\"}"), "CommandNotFound"));
    }

    @Test
    void argumentErrorsNameTheParameterAsQemuDoes() {
        assertEquals("Parameter 'node-name' is missing", generic("{\"execute\":\"blockdev-del\",\"arguments\":{}}"));
        assertEquals("Invalid parameter type for 'size', expected: integer",
                generic("{\"execute\":\"block_resize\",\"arguments\":{\"node-name\":\"a\",\"size\":\"1G\"}}"));
        assertEquals("Parameter 'foo' is unexpected",
                generic("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"a\",\"foo\":1}}"));
        assertEquals("Parameter 'driver' does not accept value 'nope'",
                generic("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"nope\",\"node-name\":\"a\"}}"));
        assertEquals("Kickplug does not support driver 'qcow2'",
                generic("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"qcow2\",\"node-name\":\"a\","
                        + "\"file\":\"f\"}}"));
        assertEquals("Parameter 'addr.path' is missing", generic("{\"execute\":\"block-export-add\",\"arguments\":"
                + "{\"type\":\"vhost-user-blk\",\"id\":\"e\",\"node-name\":\"n\",\"addr\":{\"type\":\"unix\"}}}"));
        assertEquals("Invalid parameter type for 'writable', expected: boolean",
                generic("{\"execute\":\"block-export-add\",\"arguments\":{\"type\":\"nbd\",\"id\":\"e\","
                        + "\"node-name\":\"n\",\"writable\":\"on\"}}"));
        assertEquals("Parameter 'num-queues' expects uint16", generic("{\"execute\":\"block-export-add\","
                + "\"arguments\":{\"type\":\"vhost-user-blk\",\"id\":\"e\",\"node-name\":\"n\",\"addr\":{\"type\":"
                + "\"unix\",\"path\":\"/x\"},\"num-queues\":70000}}"));
        assertEquals("'node-name' must be specified for the root node",
                generic("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\"}}"));
        assertEquals("Invalid node-name: '1a'",
                generic("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\",\"node-name\":\"1a\"}}"));
    }

    @Test
    void nullNodeResizeAndDelete() {
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\",\"node-name\":\"n0\","
                + "\"size\":67108864,\"read-zeroes\":true,\"latency-ns\":1000}}");
        assertEquals(64L << 20, f.disks.info("n0").sizeBytes());
        assertEquals("Duplicate nodes with node-name='n0'", generic("{\"execute\":\"blockdev-add\",\"arguments\":"
                + "{\"driver\":\"null-co\",\"node-name\":\"n0\"}}"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> nodes = (List<Map<String, Object>>) ok("{\"execute\":\"query-named-block-nodes\"}");
        assertEquals(1, nodes.size());
        assertEquals("n0", nodes.get(0).get("node-name"));
        assertEquals("null-co", nodes.get(0).get("drv"));
        assertEquals(false, nodes.get(0).get("ro"));
        @SuppressWarnings("unchecked")
        Map<String, Object> image = (Map<String, Object>) nodes.get(0).get("image");
        assertEquals(64L << 20, image.get("virtual-size"));

        ok("{\"execute\":\"block_resize\",\"arguments\":{\"node-name\":\"n0\",\"size\":134217728}}");
        assertEquals(128L << 20, f.disks.info("n0").sizeBytes());
        assertEquals("Cannot find device='' nor node-name='zz'",
                generic("{\"execute\":\"block_resize\",\"arguments\":{\"node-name\":\"zz\",\"size\":512}}"));

        ok("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"n0\"}}");
        assertTrue(f.disks.list().isEmpty());
        assertEquals("Failed to find node with node-name='n0'",
                generic("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"n0\"}}"));
    }

    @Test
    void rbdNodeTakesQemusNamesAndChecks() {
        // BlockdevOptionsRbd (QEMU 7.2 qapi/block-core.json): pool and image required, the others optional.
        assertEquals("Parameter 'image' is missing", generic("{\"execute\":\"blockdev-add\",\"arguments\":"
                + "{\"driver\":\"rbd\",\"node-name\":\"r0\",\"pool\":\"rbd\"}}"));
        assertEquals("Parameter 'auth-client-required.0' does not accept value 'krb'", error(keyval(
                "{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"rbd\",\"node-name\":\"r0\","
                        + "\"pool\":\"rbd\",\"image\":\"i\",\"auth-client-required\":[\"krb\"]}}"),
                "GenericError"));
        assertEquals("Parameter 'colour' is unexpected", generic("{\"execute\":\"blockdev-add\",\"arguments\":"
                + "{\"driver\":\"rbd\",\"node-name\":\"r0\",\"pool\":\"rbd\",\"image\":\"i\",\"colour\":1}}"));
        // What librbd's image name cannot carry is refused by name, nothing made.
        String refused = generic("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"rbd\",\"node-name\":"
                + "\"r0\",\"pool\":\"rbd\",\"image\":\"i\",\"server\":[{\"host\":\"10.0.0.1\",\"port\":\"6789\"}],"
                + "\"encrypt\":{\"format\":\"luks\",\"key-secret\":\"s\"}}}");
        assertTrue(refused.startsWith("Kickplug's rbd node does not support encrypt, server "), refused);
        // A snapshot without read-only: QEMU's bdrv_apply_auto_read_only refuses it unless auto-read-only.
        assertEquals("rbd snapshots are read-only", generic("{\"execute\":\"blockdev-add\",\"arguments\":"
                + "{\"driver\":\"rbd\",\"node-name\":\"r0\",\"pool\":\"rbd\",\"image\":\"i\",\"snapshot\":\"s\"}}"));
        assertTrue(f.rbdOpened.isEmpty());
        assertTrue(f.disks.list().isEmpty());

        // The command line's form: keyval strings, as kickplugd --blockdev driver=rbd,... passes them.
        QmpEngine.Reply r = keyval("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"rbd\","
                + "\"node-name\":\"r0\",\"pool\":\"rbd\",\"namespace\":\"ns\",\"image\":\"vm:1\","
                + "\"conf\":\"/etc/ceph/c.conf\",\"user\":\"kp\"}}");
        assertTrue(r.response().containsKey("return"), () -> Json.write(r.response()));
        assertEquals(1, f.rbdOpened.size());
        assertEquals(new RbdImage("rbd", "ns", "vm:1", null, "/etc/ceph/c.conf", "kp", null),
                RbdImage.parse(f.rbdOpened.get(0).path()));
        assertEquals("rbd", f.rbdOpened.get(0).kind());
        assertFalse(f.rbdOpened.get(0).readOnly());
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"rbd\",\"node-name\":\"r1\","
                + "\"pool\":\"rbd\",\"image\":\"vm1\",\"snapshot\":\"s1\",\"auto-read-only\":true}}");
        assertTrue(f.rbdOpened.get(1).readOnly(), "a snapshot opens read-only");
        assertTrue(f.disks.info("r1").readOnly());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> nodes = (List<Map<String, Object>>) ok("{\"execute\":\"query-named-block-nodes\"}");
        assertEquals("r1", nodes.get(0).get("node-name"));
        assertEquals(true, nodes.get(0).get("ro"));
        assertEquals("r0", nodes.get(1).get("node-name"));
        assertEquals("rbd", nodes.get(1).get("drv"));
        assertEquals("rbd:rbd/ns/vm\\:1:conf=/etc/ceph/c.conf:id=kp", nodes.get(1).get("file"));
        @SuppressWarnings("unchecked")
        Map<String, Object> image = (Map<String, Object>) nodes.get(1).get("image");
        assertEquals(8L << 20, image.get("virtual-size"));
        // block_resize reaches the disk (and through it the image and the guest).
        ok("{\"execute\":\"block_resize\",\"arguments\":{\"node-name\":\"r0\",\"size\":16777216}}");
        assertEquals(16L << 20, f.disks.info("r0").sizeBytes());
        assertEquals("Cannot resize a read-only node 'r1'",
                generic("{\"execute\":\"block_resize\",\"arguments\":{\"node-name\":\"r1\",\"size\":16777216}}"));
        ok("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"r0\"}}");
        ok("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"r1\"}}");
        assertTrue(f.disks.list().isEmpty());
    }

    @Test
    void rawOnFileComposesOntoOneDisk() throws IOException {
        Path img = dir.resolve("a.img");
        Files.write(img, new byte[1 << 20]);
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"file\",\"node-name\":\"f0\",\"filename\":\""
                + img + "\",\"aio\":\"threads\",\"cache\":{\"direct\":false},\"discard\":\"unmap\"}}");
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"raw\",\"node-name\":\"r0\",\"file\":\"f0\"}}");
        assertEquals(1, f.disks.list().size());
        assertEquals("Block device f0 is in use",
                generic("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"f0\"}}"));
        assertEquals("Cannot find device='f9' nor node-name='f9'", generic("{\"execute\":\"blockdev-add\","
                + "\"arguments\":{\"driver\":\"raw\",\"node-name\":\"r9\",\"file\":\"f9\"}}"));
        // inline: the implicit file node's disk takes the raw node's name, and goes with it
        Path img2 = dir.resolve("b.img");
        Files.write(img2, new byte[2 << 20]);
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"raw\",\"node-name\":\"r1\",\"read-only\":true,"
                + "\"file\":{\"driver\":\"file\",\"filename\":\"" + img2 + "\"}}}");
        assertEquals(2L << 20, f.disks.info("r1").sizeBytes());
        assertTrue(f.disks.info("r1").readOnly(), "the inline child inherits read-only");
        ok("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"r1\"}}");
        assertEquals(List.of("f0"), f.disks.list().stream().map(d -> d.name()).toList());
        ok("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"r0\"}}");
        ok("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"f0\"}}");
        assertTrue(f.disks.list().isEmpty());
    }

    @Test
    void failedAddLeavesNothing() {
        // the raw node fails (offset) after its inline child made a disk: the disk goes again
        generic("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"raw\",\"node-name\":\"r0\",\"offset\":512,"
                + "\"file\":{\"driver\":\"null-co\"}}}");
        assertTrue(f.disks.list().isEmpty());
        assertEquals(List.of(), ok("{\"execute\":\"query-named-block-nodes\"}"));
    }

    @Test
    void throttleGroupsAndNodes() {
        ok("{\"execute\":\"object-add\",\"arguments\":{\"qom-type\":\"throttle-group\",\"id\":\"g0\","
                + "\"x-iops-total\":1000,\"limits\":{\"bps-read\":1048576}}}");
        assertEquals("attempt to add duplicate property 'g0' to object (type 'container')", generic("{\"execute\":"
                + "\"object-add\",\"arguments\":{\"qom-type\":\"throttle-group\",\"id\":\"g0\"}}"));
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\",\"node-name\":\"n0\"}}");
        assertEquals("Throttle group 'g9' does not exist", generic("{\"execute\":\"blockdev-add\",\"arguments\":"
                + "{\"driver\":\"throttle\",\"node-name\":\"t0\",\"throttle-group\":\"g9\",\"file\":\"n0\"}}"));
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"throttle\",\"node-name\":\"t0\","
                + "\"throttle-group\":\"g0\",\"file\":\"n0\"}}");
        assertEquals(List.of("n0 g0 {bps-read=1048576, iops-total=1000}"), f.throttled);
        assertEquals("object 'g0' is in use, can not be deleted",
                generic("{\"execute\":\"object-del\",\"arguments\":{\"id\":\"g0\"}}"));
        ok("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"t0\"}}");
        assertEquals("n0 n0 {}", f.throttled.get(1), "deleting the throttle node lifts the limits");
        ok("{\"execute\":\"object-del\",\"arguments\":{\"id\":\"g0\"}}");
        assertEquals("object 'g0' not found", generic("{\"execute\":\"object-del\",\"arguments\":{\"id\":\"g0\"}}"));
        ok("{\"execute\":\"object-add\",\"arguments\":{\"qom-type\":\"iothread\",\"id\":\"io0\","
                + "\"poll-max-ns\":32768}}");
        assertEquals("Kickplug does not support qom-type 'secret'", generic("{\"execute\":\"object-add\","
                + "\"arguments\":{\"qom-type\":\"secret\",\"id\":\"s\"}}"));
    }

    @Test
    void vhostExportLifecycleAndEvent() {
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\",\"node-name\":\"n0\"}}");
        ok("{\"execute\":\"object-add\",\"arguments\":{\"qom-type\":\"iothread\",\"id\":\"io0\",\"poll-max-ns\":0}}");
        ok("{\"execute\":\"block-export-add\",\"arguments\":{\"type\":\"vhost-user-blk\",\"id\":\"e0\","
                + "\"node-name\":\"n0\",\"addr\":{\"type\":\"unix\",\"path\":\"/tmp/x.sock\"},\"writable\":true,"
                + "\"num-queues\":2,\"logical-block-size\":512,\"iothread\":\"io0\"}}");
        assertEquals(Map.of("socket", "/tmp/x.sock", "queues", "2"), f.vhost.options.get(0));
        assertTrue(f.vhost.made.get("n0").writable());
        assertEquals("Block export id 'e0' is already in use", generic("{\"execute\":\"block-export-add\","
                + "\"arguments\":{\"type\":\"nbd\",\"id\":\"e0\",\"node-name\":\"n0\"}}"));
        assertEquals("[{\"id\": \"e0\", \"type\": \"vhost-user-blk\", \"node-name\": \"n0\", \"shutting-down\": false}]",
                Json.write(ok("{\"execute\":\"query-block-exports\"}")));
        assertEquals("Node n0 is in use", generic("{\"execute\":\"blockdev-del\",\"arguments\":{\"node-name\":\"n0\"}}"));
        QmpEngine.Reply del = run("{\"execute\":\"block-export-del\",\"arguments\":{\"id\":\"e0\"}}");
        assertEquals(Map.of(), del.response().get("return"));
        assertEquals(1, del.events().size());
        Map<String, Object> ev = del.events().get(0);
        assertEquals("BLOCK_EXPORT_DELETED", ev.get("event"));
        assertEquals(Map.of("id", "e0"), ev.get("data"));
        @SuppressWarnings("unchecked")
        Map<String, Object> ts = (Map<String, Object>) ev.get("timestamp");
        assertTrue((Long) ts.get("seconds") > 1_600_000_000L && (Long) ts.get("microseconds") < 1_000_000L);
        assertTrue(f.vhost.made.isEmpty());
        assertEquals("Export 'e0' is not found",
                generic("{\"execute\":\"block-export-del\",\"arguments\":{\"id\":\"e0\"}}"));
        assertEquals("Kickplug's vhost-user-blk export has a logical block size of 512, not 4096",
                generic("{\"execute\":\"block-export-add\",\"arguments\":{\"type\":\"vhost-user-blk\",\"id\":\"e1\","
                        + "\"node-name\":\"n0\",\"addr\":{\"type\":\"unix\",\"path\":\"/tmp/x.sock\"},"
                        + "\"logical-block-size\":4096}}"));
        assertEquals("iothread \"io9\" not found", generic("{\"execute\":\"block-export-add\",\"arguments\":{\"type\":"
                + "\"vhost-user-blk\",\"id\":\"e1\",\"node-name\":\"n0\",\"iothread\":\"io9\",\"addr\":{\"type\":"
                + "\"unix\",\"path\":\"/tmp/x.sock\"}}}"));
    }

    @Test
    void nbdServerAndExports() {
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\",\"node-name\":\"n0\"}}");
        assertEquals("NBD server not running", generic("{\"execute\":\"block-export-add\",\"arguments\":{\"type\":"
                + "\"nbd\",\"id\":\"e0\",\"node-name\":\"n0\"}}"));
        ok("{\"execute\":\"nbd-server-start\",\"arguments\":{\"addr\":{\"type\":\"unix\",\"data\":{\"path\":"
                + "\"/tmp/n.sock\"}}}}");
        assertEquals("unix:/tmp/n.sock", f.nbdAddress);
        assertEquals("NBD server already running", generic("{\"execute\":\"nbd-server-start\",\"arguments\":"
                + "{\"addr\":{\"type\":\"unix\",\"path\":\"/tmp/m.sock\"}}}"));
        ok("{\"execute\":\"block-export-add\",\"arguments\":{\"type\":\"nbd\",\"id\":\"e0\",\"node-name\":\"n0\"}}");
        assertEquals(Map.of("name", "n0"), f.nbd.options.get(0));
        assertFalse(f.nbd.made.get("n0").writable());
        QmpEngine.Reply stop = run("{\"execute\":\"nbd-server-stop\"}");
        assertEquals(Map.of(), stop.response().get("return"));
        assertEquals(Map.of("id", "e0"), stop.events().get(0).get("data"));
        assertNull(f.nbdAddress);
        assertEquals(List.of(), ok("{\"execute\":\"query-block-exports\"}"));
        // the command line's flat SocketAddress is taken too
        ok("{\"execute\":\"nbd-server-start\",\"arguments\":{\"addr\":{\"type\":\"inet\",\"host\":\"127.0.0.1\","
                + "\"port\":\"10809\"}}}");
        assertEquals("tcp:127.0.0.1:10809", f.nbdAddress);
    }

    @Test
    void keyvalCoercesByType() {
        QmpEngine.Reply r = keyval("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\","
                + "\"node-name\":\"n0\",\"size\":\"0x4000000\",\"read-zeroes\":\"on\",\"x-queues\":\"2\"}}");
        assertTrue(r.response().containsKey("return"), () -> Json.write(r.response()));
        assertEquals(64L << 20, f.disks.info("n0").sizeBytes());
        assertEquals(2, f.disks.info("n0").numQueues());
        // null-co's size is an int in QAPI: no suffix, as in QEMU
        assertEquals("Parameter 'size' expects integer", error(keyval("{\"execute\":\"blockdev-add\",\"arguments\":"
                + "{\"driver\":\"null-co\",\"node-name\":\"n1\",\"size\":\"64M\"}}"), "GenericError"));
        assertEquals("Parameter 'read-zeroes' expects 'on' or 'off'", error(keyval("{\"execute\":\"blockdev-add\","
                + "\"arguments\":{\"driver\":\"null-co\",\"node-name\":\"n1\",\"read-zeroes\":\"maybe\"}}"),
                "GenericError"));
        QmpEngine.Reply e = keyval("{\"execute\":\"block-export-add\",\"arguments\":{\"type\":\"vhost-user-blk\","
                + "\"id\":\"e0\",\"node-name\":\"n0\",\"addr\":{\"type\":\"unix\",\"path\":\"/tmp/k.sock\"},"
                + "\"writable\":\"on\",\"num-queues\":\"2\",\"logical-block-size\":\"0.5K\"}}");
        assertTrue(e.response().containsKey("return"), () -> Json.write(e.response()));
        assertEquals(Map.of("socket", "/tmp/k.sock", "queues", "2"), f.vhost.options.get(0));
        // the command line's --nbd-server: flat addr, strings
        QmpEngine.Reply n = keyval("{\"execute\":\"nbd-server-start\",\"arguments\":{\"addr\":{\"type\":\"inet\","
                + "\"host\":\"127.0.0.1\",\"port\":\"10809\",\"ipv4\":\"on\"},\"max-connections\":\"4\"}}");
        assertTrue(n.response().containsKey("return"), () -> Json.write(n.response()));
        assertEquals("tcp:127.0.0.1:10809", f.nbdAddress);
        assertEquals("Parameter 'num-queues' expects integer", error(keyval("{\"execute\":\"block-export-add\","
                + "\"arguments\":{\"type\":\"vhost-user-blk\",\"id\":\"e1\",\"node-name\":\"n0\",\"addr\":{\"type\":"
                + "\"unix\",\"path\":\"/tmp/k.sock\"},\"num-queues\":\"two\"}}"), "GenericError"));
    }

    @Test
    void sizes() {
        assertEquals(64L << 20, Schema.parseSize("64M"));
        assertEquals(1536L, Schema.parseSize("1.5k"));
        assertEquals(512L, Schema.parseSize("512"));
        assertEquals(512L, Schema.parseSize("512B"));
        assertEquals(255L, Schema.parseSize("0xff"));
        assertNull(Schema.parseSize("1.5"));
        assertNull(Schema.parseSize("M"));
        assertNull(Schema.parseSize("16E"));
        assertNull(Schema.parseSize("-1"));
        assertEquals(16L, Schema.parseInteger("0x10"));
        assertEquals(8L, Schema.parseInteger("010"));
        assertNull(Schema.parseInteger("1K"));
    }

    @Test
    void stateOutlivesTheEngine() {
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\",\"node-name\":\"n0\"}}");
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"raw\",\"node-name\":\"r0\",\"file\":\"n0\"}}");
        ok("{\"execute\":\"object-add\",\"arguments\":{\"qom-type\":\"throttle-group\",\"id\":\"g0\","
                + "\"x-iops-total\":10}}");
        ok("{\"execute\":\"block-export-add\",\"arguments\":{\"type\":\"vhost-user-blk\",\"id\":\"e0\","
                + "\"node-name\":\"r0\",\"addr\":{\"type\":\"unix\",\"path\":\"/tmp/x.sock\"},\"writable\":true}}");
        engine = f.engine(); // as after an update of the QMP bundle
        assertEquals("[{\"id\": \"e0\", \"type\": \"vhost-user-blk\", \"node-name\": \"r0\", \"shutting-down\": false}]",
                Json.write(ok("{\"execute\":\"query-block-exports\"}")));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> nodes = (List<Map<String, Object>>) ok("{\"execute\":\"query-named-block-nodes\"}");
        assertEquals(List.of("r0", "n0"), nodes.stream().map(n -> n.get("node-name")).toList());
        assertEquals("attempt to add duplicate property 'g0' to object (type 'container')", generic("{\"execute\":"
                + "\"object-add\",\"arguments\":{\"qom-type\":\"throttle-group\",\"id\":\"g0\"}}"));
        ok("{\"execute\":\"block-export-del\",\"arguments\":{\"id\":\"e0\"}}");
        // a disk detached while the engine was away takes its nodes with it
        f.disks.detach("n0");
        engine = f.engine();
        assertEquals(List.of(), ok("{\"execute\":\"query-named-block-nodes\"}"));
    }

    @Test
    void kickplugSettingsAndOwnCommands() {
        ok("{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\",\"node-name\":\"n0\","
                + "\"x-ring\":\"packed\",\"x-tracked-lock\":\"sharded\",\"x-queues\":2,\"x-iothreads\":2,"
                + "\"x-mapping\":\"0;1\",\"x-notify\":\"immediate\"}}");
        var info = f.disks.info("n0");
        assertEquals("PACKED", info.ring().name());
        assertEquals(2, info.ioThreads());
        assertEquals(List.of(List.of(0), List.of(1)), info.mapping());
        assertEquals("sharded", info.trackedLock().label());
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> queues = (List<Map<String, Object>>) ok("{\"execute\":\"x-kickplug-notify\","
                + "\"arguments\":{\"node-name\":\"n0\",\"strategy\":\"immediate\"}}");
        assertEquals(2, queues.size());
        assertEquals("immediate", queues.get(0).get("configured"));
        @SuppressWarnings("unchecked")
        List<Map<String, Object>> stats = (List<Map<String, Object>>) ok("{\"execute\":\"x-kickplug-stats\"}");
        assertEquals("n0", stats.get(0).get("disk"));
        assertEquals(1L << 30, stats.get(0).get("size"));
        assertEquals("no bundle io.kickplug.nope", generic("{\"execute\":\"x-kickplug-swap\",\"arguments\":"
                + "{\"bundle\":\"io.kickplug.nope\"}}"));
    }

    @Test
    void quitIsFlaggedForAfterTheReply() {
        QmpEngine.Reply r = run("{\"execute\":\"quit\"}");
        assertEquals(Map.of(), r.response().get("return"));
        assertTrue(r.quit());
        assertFalse(run("{\"execute\":\"query-version\"}").quit());
    }
}
