package io.kickplug.launcher;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** qemu-storage-daemon's options to the QMP commands QSD runs for them (storage-daemon/qemu-storage-daemon.c). */
class QsdTest {

    private static List<String> statements(String... args) throws Exception {
        return StatementSources.load(Options.parse(args));
    }

    private static String error(String... args) {
        return assertThrows(Launcher.StartupException.class, () -> statements(args)).getMessage();
    }

    @Test
    void theIssuesCommandLine() throws Exception {
        assertEquals(List.of(
                "kp:qmp --keyval '{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"file\","
                        + "\"node-name\":\"d0\",\"filename\":\"disk.img\"}}'",
                "kp:qmp --keyval '{\"execute\":\"block-export-add\",\"arguments\":{\"type\":\"vhost-user-blk\","
                        + "\"id\":\"e0\",\"node-name\":\"d0\",\"addr\":{\"type\":\"unix\",\"path\":\"/tmp/vu.sock\"},"
                        + "\"writable\":\"on\",\"num-queues\":\"2\"}}'"),
                statements("--blockdev", "driver=file,node-name=d0,filename=disk.img",
                        "--export", "type=vhost-user-blk,id=e0,node-name=d0,addr.type=unix,addr.path=/tmp/vu.sock,"
                                + "writable=on,num-queues=2"));
    }

    @Test
    void anRbdNodeWithAListOfMonitors() throws Exception {
        // QEMU's BlockdevOptionsRbd on the command line: strings for the QMP bundle to type, a list from indexes.
        assertEquals(List.of("kp:qmp --keyval '{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"rbd\","
                + "\"node-name\":\"n0\",\"pool\":\"rbd\",\"image\":\"img\",\"conf\":\"/etc/ceph/ceph.conf\","
                + "\"user\":\"admin\",\"snapshot\":\"s\",\"read-only\":\"on\",\"server\":[{\"host\":\"10.0.0.1\","
                + "\"port\":\"3300\"},{\"host\":\"::1\",\"port\":\"6789\"}]}}'"),
                statements("--blockdev", "driver=rbd,node-name=n0,pool=rbd,image=img,conf=/etc/ceph/ceph.conf,"
                        + "user=admin,snapshot=s,read-only=on,server.0.host=10.0.0.1,server.0.port=3300,"
                        + "server.1.host=::1,server.1.port=6789"));
    }

    @Test
    void impliedKeysAndTheEqualsForm() throws Exception {
        assertEquals(List.of(
                "kp:qmp --keyval '{\"execute\":\"object-add\",\"arguments\":{\"qom-type\":\"iothread\",\"id\":\"io0\","
                        + "\"poll-max-ns\":\"0\"}}'",
                "kp:qmp --keyval '{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\",\"node-name\":\"n\"}}'",
                "kp:qmp --keyval '{\"execute\":\"block-export-add\",\"arguments\":{\"type\":\"vhost-user-blk\","
                        + "\"id\":\"e\",\"node-name\":\"n\",\"addr\":{\"type\":\"fd\",\"str\":\"3\"}}}'"),
                statements("--object", "iothread,id=io0,poll-max-ns=0", "--blockdev=null-co,node-name=n",
                        "--export", "vhost-user-blk,id=e,node-name=n,addr.type=fd,addr.str=3"));
    }

    @Test
    void jsonFormIsTypedAndKeptAsWritten() throws Exception {
        assertEquals(List.of("kp:qmp '{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"null-co\","
                + "\"node-name\":\"n\",\"size\":1048576,\"read-zeroes\":true,\"x\":null,\"l\":[1.5e3]}}'"),
                statements("--blockdev", "{ \"driver\": \"null-co\",\n\"node-name\":\"n\",\"size\":1048576,"
                        + "\"read-zeroes\":true,\"x\":null,\"l\":[1.5e3]}"));
    }

    @Test
    void anyCharacterSurvivesGogoQuoting() throws Exception {
        // Gogo takes a single-quoted word as it is; a single quote inside JSON is written \u0027.
        assertEquals(List.of("kp:qmp --keyval '{\"execute\":\"blockdev-add\",\"arguments\":{\"driver\":\"file\","
                + "\"filename\":\"a\\u0027b\\\"c\\\\d $x ${y} ; # ,\"}}'"),
                statements("--blockdev", "driver=file,filename=a'b\"c\\d $x ${y} ; # ,,"));
        assertEquals(List.of("kp:qmp '{\"execute\":\"blockdev-add\",\"arguments\":{\"filename\":\"it\\u0027s\"}}'"),
                statements("--blockdev", "{\"filename\":\"it's\"}"));
    }

    @Test
    void nbdServerAddressBecomesQmpsLegacyForm() throws Exception {
        assertEquals(List.of("kp:qmp --keyval '{\"execute\":\"nbd-server-start\",\"arguments\":{\"addr\":{"
                + "\"type\":\"inet\",\"data\":{\"host\":\"127.0.0.1\",\"port\":\"10809\"}},\"max-connections\":\"4\"}}'"),
                statements("--nbd-server", "addr.type=inet,addr.host=127.0.0.1,addr.port=10809,max-connections=4"));
        assertEquals(List.of("kp:qmp '{\"execute\":\"nbd-server-start\",\"arguments\":{\"addr\":{"
                + "\"type\":\"unix\",\"data\":{\"path\":\"/tmp/n.sock\"}}}}'"),
                statements("--nbd-server", "{\"addr\":{\"type\":\"unix\",\"path\":\"/tmp/n.sock\"}}"));
    }

    @Test
    void chardevAndMonitorMakeAQmpMonitor() throws Exception {
        assertEquals(List.of("kp:qmp-monitor '/tmp/q.sock'", "kp:qmp-monitor '/tmp/q,2.sock'"),
                statements("--chardev", "socket,id=m0,path=/tmp/q.sock,server=on,wait=off", "--monitor", "m0",
                        "--chardev", "socket,id=m1,path=/tmp/q,,2.sock,server,nowait",
                        "--monitor", "chardev=m1,mode=control,pretty=on"));
    }

    @Test
    void optionsRunInTheOrderGivenAmongStatements() throws Exception {
        List<String> s = statements("-c", "kp:disks", "--blockdev", "null-co,node-name=n", "-c", "echo after");
        assertEquals("kp:disks", s.get(0));
        assertEquals("echo after", s.get(2));
        Map<String, String> labels = new HashMap<>();
        StatementSources.load(Options.parse("--blockdev", "null-co,node-name=n"), labels);
        assertEquals(List.of("--blockdev null-co,node-name=n"), new ArrayList<>(labels.values()));
    }

    @Test
    void errorsNameTheOptionAsQsdDoes() {
        assertEquals("--blockdev driver=null-co,node-name=a,bad key=1: Invalid parameter 'bad key'",
                error("--blockdev", "driver=null-co,node-name=a,bad key=1"));
        assertEquals("--blockdev {\"driver\":: JSON parse error, invalid JSON at 10: unexpected end",
                error("--blockdev", "{\"driver\":"));
        assertEquals("--blockdev [1]=x: Invalid parameter '[1]'", error("--blockdev", "[1]=x"));
        assertEquals("--monitor chardev=x: chardev \"x\" not found", error("--monitor", "chardev=x"));
        assertEquals("--monitor foo,mode=readline: Only QMP is supported",
                error("--chardev", "socket,id=foo,path=/tmp/f,server=on", "--monitor", "foo,mode=readline"));
        assertEquals("--monitor m,colour=on: Parameter 'colour' is unexpected",
                error("--chardev", "socket,id=m,path=/tmp/f,server=on", "--monitor", "m,colour=on"));
        assertEquals("--chardev socket,path=/tmp/x.sock,server=on,wait=off: chardev: no id specified",
                error("--chardev", "socket,path=/tmp/x.sock,server=on,wait=off"));
        assertEquals("--chardev socket,id=c,host=h,port=1,server=on: chardev: only a Unix socket (path=) is supported",
                error("--chardev", "socket,id=c,host=h,port=1,server=on"));
        assertEquals("--chardev socket,id=c,path=/p,server=on,telnet=on: Invalid parameter 'telnet'",
                error("--chardev", "socket,id=c,path=/p,server=on,telnet=on"));
        assertEquals("--object help: --object help is not supported", error("--object", "help"));
    }

    @Test
    void qsdOptionsImplyADaemon() throws Exception {
        assertEquals(true, Options.parse("--blockdev", "null-co,node-name=n").daemon());
        Options o = Options.parse("--daemonize", "--pidfile", "/tmp/p");
        assertEquals(true, o.daemon());
        assertEquals(true, o.daemonize());
        assertEquals(true, Options.parse("-V").version());
        assertEquals(1, Options.usageStatus("--export", "x", "--no-such"));
        assertEquals(1, Options.usageStatus("--daemon", "--no-such"));
        assertEquals(2, Options.usageStatus("--no-such"));
        assertEquals("-T (QEMU's trace events) is not supported; use --log-level debug",
                assertThrows(Options.UsageException.class, () -> Options.parse("-T", "x")).getMessage());
        assertEquals("--export needs a value (try --help)",
                assertThrows(Options.UsageException.class, () -> Options.parse("--export")).getMessage());
        assertNull(Options.parse("--blockdev", "null-co,node-name=n").pidfile());
    }
}
