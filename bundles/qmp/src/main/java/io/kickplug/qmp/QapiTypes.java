package io.kickplug.qmp;

import static io.kickplug.qmp.Schema.opt;
import static io.kickplug.qmp.Schema.req;

import io.kickplug.qmp.Schema.Alternate;
import io.kickplug.qmp.Schema.Enum;
import io.kickplug.qmp.Schema.Field;
import io.kickplug.qmp.Schema.ListOf;
import io.kickplug.qmp.Schema.Scalar;
import io.kickplug.qmp.Schema.Struct;
import io.kickplug.qmp.Schema.Union;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The argument types of the commands Kickplug answers, transcribed from QEMU 7.2's QAPI schema (qapi/block-core.json,
 * block-export.json, qom.json, sockets.json, control.json) for the members Kickplug reads; Kickplug's own settings are
 * the {@code x-} members of {@link #BLOCKDEV_BASE}.
 */
final class QapiTypes {

    private QapiTypes() {
    }

    /** BlockdevDriver: every driver QEMU 7.2 knows, so that an unsupported one is told apart from a typo. */
    static final Enum BLOCKDEV_DRIVER = Enum.of("blkdebug", "blklogwrites", "blkreplay", "blkverify", "bochs", "cloop",
            "compress", "copy-before-write", "copy-on-read", "dmg", "file", "snapshot-access", "ftp", "ftps", "gluster",
            "host_cdrom", "host_device", "http", "https", "io_uring", "iscsi", "luks", "nbd", "nfs", "null-aio",
            "null-co", "nvme", "nvme-io_uring", "parallels", "preallocate", "qcow", "qcow2", "qed", "quorum", "raw",
            "rbd", "replication", "ssh", "throttle", "vdi", "vhdx", "virtio-blk-vfio-pci", "virtio-blk-vhost-user",
            "virtio-blk-vhost-vdpa", "vmdk", "vpc", "vvfat");

    /** Kickplug's settings of the disk a node makes, the way QEMU names experimental properties. */
    static final List<Field> KICKPLUG_SETTINGS = List.of(
            opt("x-notify", Scalar.STR),
            opt("x-ring", Enum.of("split", "packed")),
            opt("x-tracked-lock", Scalar.STR),
            opt("x-avail-event", Enum.of("enable", "pop")),
            opt("x-mapping", Scalar.STR),
            opt("x-queues", Scalar.UINT16),
            opt("x-queue-size", Scalar.UINT16),
            opt("x-iothreads", Scalar.UINT16),
            opt("x-workers", Scalar.UINT16),
            opt("x-serial", Scalar.STR));

    static final Struct BLOCKDEV_BASE = Struct.of(
            req("driver", BLOCKDEV_DRIVER),
            opt("node-name", Scalar.STR),
            opt("discard", Enum.of("ignore", "unmap")),
            opt("cache", Struct.of(opt("direct", Scalar.BOOL), opt("no-flush", Scalar.BOOL))),
            opt("read-only", Scalar.BOOL),
            opt("auto-read-only", Scalar.BOOL),
            opt("force-share", Scalar.BOOL),
            opt("detect-zeroes", Enum.of("off", "on", "unmap")))
            .plus(KICKPLUG_SETTINGS.toArray(Field[]::new));

    static final Struct INET = Struct.of(req("host", Scalar.STR), req("port", Scalar.STR),
            opt("numeric", Scalar.BOOL), opt("to", Scalar.UINT16), opt("ipv4", Scalar.BOOL),
            opt("ipv6", Scalar.BOOL), opt("keep-alive", Scalar.BOOL), opt("mptcp", Scalar.BOOL));
    static final Struct UNIX = Struct.of(req("path", Scalar.STR), opt("abstract", Scalar.BOOL),
            opt("tight", Scalar.BOOL));
    static final Struct VSOCK = Struct.of(req("cid", Scalar.STR), req("port", Scalar.STR));
    static final Struct FD = Struct.of(req("str", Scalar.STR));
    static final Enum SOCKET_TYPE = Enum.of("inet", "unix", "vsock", "fd");

    /** SocketAddress (flat union, sockets.json). */
    static final Union SOCKET_ADDRESS = new Union(Struct.of(req("type", SOCKET_TYPE)), "type",
            Map.of("inet", INET, "unix", UNIX, "vsock", VSOCK, "fd", FD));

    /** SocketAddressLegacy (the members under "data", as nbd-server-start's addr takes them in QMP). */
    static final Union SOCKET_ADDRESS_LEGACY = new Union(Struct.of(req("type", SOCKET_TYPE)), "type", Map.of(
            "inet", Struct.of(req("data", INET)), "unix", Struct.of(req("data", UNIX)),
            "vsock", Struct.of(req("data", VSOCK)), "fd", Struct.of(req("data", Struct.of(req("str", Scalar.STR))))));

    /** InetSocketAddressBase (sockets.json): a host and a port, both strings. */
    static final Struct INET_BASE = Struct.of(req("host", Scalar.STR), req("port", Scalar.STR));

    /** RbdEncryptionOptions (block-core.json): LUKS or LUKS2 with the passphrase in a secret object. */
    static final Union RBD_ENCRYPTION_OPTIONS = new Union(Struct.of(req("format", Enum.of("luks", "luks2"))),
            "format", Map.of("luks", Struct.of(req("key-secret", Scalar.STR)),
                    "luks2", Struct.of(req("key-secret", Scalar.STR))));

    /** BlockdevOptionsRbd (block-core.json), QEMU 7.2's members in its order. */
    static final Struct BLOCKDEV_OPTIONS_RBD = Struct.of(req("pool", Scalar.STR), opt("namespace", Scalar.STR),
            req("image", Scalar.STR), opt("conf", Scalar.STR), opt("snapshot", Scalar.STR),
            opt("encrypt", RBD_ENCRYPTION_OPTIONS), opt("user", Scalar.STR),
            opt("auth-client-required", new ListOf(Enum.of("cephx", "none"))), opt("key-secret", Scalar.STR),
            opt("server", new ListOf(INET_BASE)));

    static final Union BLOCKDEV_OPTIONS = blockdevOptions();

    private static Union blockdevOptions() {
        Map<String, Struct> variants = new LinkedHashMap<>();
        // The union refers to itself through BlockdevRef: the variants are filled in after it exists.
        Union u = new Union(BLOCKDEV_BASE, "driver", variants);
        Alternate ref = new Alternate(u);
        Struct file = Struct.of(req("filename", Scalar.STR), opt("pr-manager", Scalar.STR),
                opt("locking", Enum.of("auto", "on", "off")), opt("aio", Enum.of("threads", "native", "io_uring")),
                opt("aio-max-batch", Scalar.INT), opt("drop-cache", Scalar.BOOL),
                opt("x-check-cache-dropped", Scalar.BOOL));
        variants.put("file", file);
        variants.put("host_device", file);
        Struct nul = Struct.of(opt("size", Scalar.INT), opt("latency-ns", Scalar.UINT64),
                opt("read-zeroes", Scalar.BOOL));
        variants.put("null-co", nul);
        variants.put("null-aio", nul);
        variants.put("raw", Struct.of(req("file", ref), opt("offset", Scalar.INT), opt("size", Scalar.INT)));
        variants.put("throttle", Struct.of(req("throttle-group", Scalar.STR), req("file", ref)));
        variants.put("nbd", Struct.of(req("server", SOCKET_ADDRESS), opt("export", Scalar.STR),
                opt("tls-creds", Scalar.STR), opt("tls-hostname", Scalar.STR), opt("x-dirty-bitmap", Scalar.STR),
                opt("reconnect-delay", Scalar.UINT32), opt("open-timeout", Scalar.UINT32)));
        variants.put("rbd", BLOCKDEV_OPTIONS_RBD);
        return u;
    }

    static final Union BLOCK_EXPORT_OPTIONS = new Union(Struct.of(
            req("type", Enum.of("nbd", "vhost-user-blk", "fuse", "vduse-blk")),
            req("id", Scalar.STR),
            opt("fixed-iothread", Scalar.BOOL),
            opt("iothread", Scalar.STR),
            req("node-name", Scalar.STR),
            opt("writable", Scalar.BOOL),
            opt("writethrough", Scalar.BOOL)), "type", Map.of(
            "nbd", Struct.of(opt("name", Scalar.STR), opt("description", Scalar.STR),
                    opt("bitmaps", new ListOf(Scalar.STR)), opt("allocation-depth", Scalar.BOOL)),
            "vhost-user-blk", Struct.of(req("addr", SOCKET_ADDRESS), opt("logical-block-size", Scalar.SIZE),
                    opt("num-queues", Scalar.UINT16))));

    /** ThrottleLimits (qom.json / block-core.json), QEMU's names. */
    static final List<String> LIMIT_NAMES = List.of("iops-total", "iops-total-max", "iops-total-max-length",
            "iops-read", "iops-read-max", "iops-read-max-length", "iops-write", "iops-write-max",
            "iops-write-max-length", "bps-total", "bps-total-max", "bps-total-max-length", "bps-read", "bps-read-max",
            "bps-read-max-length", "bps-write", "bps-write-max", "bps-write-max-length", "iops-size");

    static final Union OBJECT_OPTIONS = objectOptions();

    private static Union objectOptions() {
        Struct limits = new Struct(LIMIT_NAMES.stream().map(n -> opt(n, Scalar.INT)).toList());
        Struct throttleGroup = Struct.of(opt("limits", limits))
                .plus(LIMIT_NAMES.stream().map(n -> opt("x-" + n, Scalar.INT)).toArray(Field[]::new));
        Struct iothread = Struct.of(opt("aio-max-batch", Scalar.INT), opt("thread-pool-min", Scalar.INT),
                opt("thread-pool-max", Scalar.INT), opt("poll-max-ns", Scalar.INT), opt("poll-grow", Scalar.INT),
                opt("poll-shrink", Scalar.INT));
        Enum types = Enum.of("authz-list", "authz-listfile", "authz-pam", "authz-simple", "can-bus", "cryptodev-backend",
                "cryptodev-backend-builtin", "dbus-vmstate", "filter-buffer", "filter-dump", "filter-mirror",
                "filter-redirector", "filter-replay", "filter-rewriter", "input-barrier", "input-linux", "iothread",
                "main-loop", "memory-backend-epc", "memory-backend-file", "memory-backend-memfd", "memory-backend-ram",
                "pef-guest", "pr-manager-helper", "qtest", "rng-builtin", "rng-egd", "rng-random", "secret",
                "secret_keyring", "sev-guest", "throttle-group", "tls-creds-anon", "tls-creds-psk", "tls-creds-x509",
                "tls-cipher-suites", "x-remote-object", "x-vfio-user-server");
        return new Union(Struct.of(req("qom-type", types), req("id", Scalar.STR)), "qom-type",
                Map.of("iothread", iothread, "throttle-group", throttleGroup));
    }

    static final Struct NONE = Struct.of();
}
