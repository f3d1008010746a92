package io.kickplug.vhost.backend;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.virtio.DeviceActivation;
import io.kickplug.api.virtio.DeviceQueue;
import io.kickplug.api.virtio.DeviceSignals;
import io.kickplug.api.virtio.GuestFaultException;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.vhost.protocol.Fds;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.VhostUser;
import java.io.Closeable;
import java.io.FileDescriptor;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The device half of one vhost-user connection: it carries out the front-end's messages
 * (docs/interop/vhost-user.rst) on a {@link VirtioDevice} and is the device's {@link DeviceSignals}.
 *
 * <p>The device runs the queues that are <em>ready</em>: configured (SET_VRING_NUM and SET_VRING_ADDR),
 * started (a kick descriptor arrived and no GET_VRING_BASE since) and enabled (SET_VRING_ENABLE 1, or
 * implicitly when VHOST_USER_F_PROTOCOL_FEATURES was not acked). Whenever that set, the memory table or the
 * features change, the device is reset (waiting for in-flight requests, VIRTIO 1.2 section 2.4), each
 * running queue's indices are saved, and the device is activated again with the new set. GET_VRING_BASE
 * therefore returns an index with nothing in flight, and QEMU's stop-and-restart (a short first start,
 * then Linux's) works.
 *
 * <p>Inflight I/O tracking (INFLIGHT_SHMFD): GET_INFLIGHT_FD creates the shared area ({@link InflightRegion}),
 * SET_INFLIGHT_FD maps the one the front-end keeps; while an area is set every started queue is wrapped in an
 * {@link InflightQueue} that records taken and used heads, and a start first recovers the area as
 * libvhost-user does, resubmitting heads an earlier back-end took and never used.
 *
 * <p>Threading: {@link #handle} runs on the connection's message thread only; kicks arrive on the
 * {@link KickPoller} thread; {@link #usedBuffer} and {@link #deviceError} on I/O threads.
 */
public final class VhostUserBackend implements DeviceSignals, Closeable {

    private static final Logger LOG = System.getLogger(VhostUserBackend.class.getName());

    /** Protocol features offered. */
    public static final long PROTOCOL_FEATURES = VhostUser.PROTOCOL_F_MQ | VhostUser.PROTOCOL_F_REPLY_ACK
            | VhostUser.PROTOCOL_F_CONFIG | VhostUser.PROTOCOL_F_CONFIGURE_MEM_SLOTS
            | VhostUser.PROTOCOL_F_RESET_DEVICE | VhostUser.PROTOCOL_F_INFLIGHT_SHMFD
            | VhostUser.PROTOCOL_F_BACKEND_REQ;
    /** GET_MAX_MEM_SLOTS answer. */
    public static final int MAX_MEM_SLOTS = 32;

    /** Where replies go. */
    @FunctionalInterface
    public interface Replier {
        /** Sends a reply; {@code fds} (may be {@code null}) go along as SCM_RIGHTS. */
        void reply(int request, byte[] payload, FileDescriptor[] fds) throws IOException;
    }

    private final String name;
    private final VirtioDevice device;
    private final VirtqueueFactory queueFactory;
    private final GuestMemoryFactory memoryFactory;
    private final Replier replier;
    private final KickPoller poller;
    private final Vring[] rings;
    private final MemoryTable memoryTable = new MemoryTable();
    private GuestMemory memory;
    /** The inflight-tracking area from SET_INFLIGHT_FD, or {@code null}. */
    private InflightRegion inflight;
    /** A descriptor to send with the reply being built (GET_INFLIGHT_FD), closed after sending. */
    private InflightRegion.Created replyArea;
    private final AtomicLong resubmitted = new AtomicLong();

    private volatile boolean owner;
    private volatile long ackedFeatures;
    private boolean featuresSet;
    private volatile long protocolFeatures;
    /** Region count and bytes, for {@link #status()} from other threads. */
    private volatile int memoryRegions;
    private volatile long memoryBytes;
    /** True while the device is activated; its queues are those with a non-null view. */
    private boolean running;
    /** Queues the kick poller may forward, replaced as a whole. */
    private volatile boolean[] runningQueues;
    private volatile boolean needsReset;
    private volatile String lastFault;
    private volatile String lastRefusal;
    private final AtomicLong messages = new AtomicLong();
    private final AtomicLong refusals = new AtomicLong();
    private final AtomicLong interrupts = new AtomicLong();
    private final AtomicLong activations = new AtomicLong();
    private boolean configChangeLogged;
    /** The back-end request channel from SET_BACKEND_REQ_FD, or {@code null}. */
    private volatile BackendChannel backendChannel;
    /** False once a device reset failed: mappings are then never unmapped explicitly ({@link MappingRelease}). */
    private boolean resetsClean = true;

    /**
     * @param name the disk or export name, for thread and log names
     * @param replier where replies are written (the connection's socket)
     */
    public VhostUserBackend(String name, VirtioDevice device, VirtqueueFactory queueFactory,
            GuestMemoryFactory memoryFactory, Replier replier) throws IOException {
        this.name = name;
        this.device = device;
        this.queueFactory = queueFactory;
        this.memoryFactory = memoryFactory;
        this.replier = replier;
        this.rings = new Vring[device.queueCount()];
        for (int i = 0; i < rings.length; i++) {
            rings[i] = new Vring(i);
        }
        this.runningQueues = new boolean[rings.length];
        this.poller = new KickPoller("kickplug-vhost-" + name + "-kick", this::kicked);
    }

    /** Virtio features offered: the device's plus VHOST_USER_F_PROTOCOL_FEATURES. */
    public long offeredFeatures() {
        return device.offeredFeatures() | VhostUser.F_PROTOCOL_FEATURES;
    }

    /**
     * Carries out one message and writes its reply, if any. A message that is malformed or not allowed now is
     * refused: one log line, its descriptors closed, and an error reply where the protocol has one (REPLY_ACK
     * with a non-zero status, or an empty payload for requests that always answer). Never throws for bad
     * input; an {@link IOException} means the reply could not be written.
     */
    public void handle(Message m) throws IOException {
        messages.incrementAndGet();
        byte[] reply;
        replyArea = null;
        try {
            reply = dispatch(m);
        } catch (Refused r) {
            refuse(m, r.getMessage());
            return;
        } catch (RuntimeException e) {
            // A bug of ours must not end the backend: refuse the message and keep serving.
            LOG.log(Level.ERROR, "vhost-user " + name + ": " + m.name() + " failed", e);
            refuse(m, "internal error: " + e);
            return;
        }
        if (reply != null && replyArea != null) {
            try {
                replier.reply(m.request(), reply, new FileDescriptor[] {replyArea.fd()});
            } finally {
                // The front-end holds its own copy of the descriptor now and passes it back with
                // SET_INFLIGHT_FD; this mapping of it was only used to size and zero the area.
                replyArea.file().close();
                replyArea.region().unmap();
                replyArea = null;
            }
        } else if (reply != null) {
            replier.reply(m.request(), reply, null);
        } else if (m.needReply() && replyAck()) {
            replier.reply(m.request(), Message.u64(0), null);
        }
    }

    private void refuse(Message m, String why) throws IOException {
        refusals.incrementAndGet();
        String text = m.name() + " refused: " + why;
        lastRefusal = text;
        LOG.log(Level.WARNING, "vhost-user " + name + ": " + text);
        Fds.closeAll(m.fds());
        if (alwaysReplies(m.request())) {
            // An empty payload: QEMU checks the reply size and fails the request instead of waiting.
            replier.reply(m.request(), new byte[0], null);
        } else if (m.needReply() && replyAck()) {
            replier.reply(m.request(), Message.u64(1), null);
        }
    }

    private static boolean alwaysReplies(int request) {
        return switch (request) {
            case VhostUser.GET_FEATURES, VhostUser.GET_PROTOCOL_FEATURES, VhostUser.GET_VRING_BASE,
                    VhostUser.GET_QUEUE_NUM, VhostUser.GET_CONFIG, VhostUser.GET_MAX_MEM_SLOTS,
                    VhostUser.GET_INFLIGHT_FD -> true;
            default -> false;
        };
    }

    private boolean replyAck() {
        return (protocolFeatures & VhostUser.PROTOCOL_F_REPLY_ACK) != 0;
    }

    /** Returns the reply payload for requests that have one, else {@code null}. */
    private byte[] dispatch(Message m) throws Refused {
        switch (m.request()) {
            case VhostUser.GET_FEATURES -> {
                expect(m, 0, 0);
                return Message.u64(offeredFeatures());
            }
            case VhostUser.SET_FEATURES -> {
                expect(m, 8, 0);
                setFeatures(m.body().getLong());
                return null;
            }
            case VhostUser.GET_PROTOCOL_FEATURES -> {
                expect(m, 0, 0);
                return Message.u64(PROTOCOL_FEATURES);
            }
            case VhostUser.SET_PROTOCOL_FEATURES -> {
                expect(m, 8, 0);
                long f = m.body().getLong();
                if ((f & ~PROTOCOL_FEATURES) != 0) {
                    throw new Refused(String.format("protocol features 0x%x were not offered (offered 0x%x)",
                            f & ~PROTOCOL_FEATURES, PROTOCOL_FEATURES));
                }
                protocolFeatures = f;
                return null;
            }
            case VhostUser.SET_OWNER -> {
                expect(m, 0, 0);
                owner = true;
                return null;
            }
            case VhostUser.RESET_OWNER -> {
                expect(m, 0, 0);
                resetDevice(true);
                owner = false;
                return null;
            }
            case VhostUser.RESET_DEVICE -> {
                requireProtocol(VhostUser.PROTOCOL_F_RESET_DEVICE, "RESET_DEVICE");
                expect(m, 0, 0);
                resetDevice(false);
                return null;
            }
            case VhostUser.GET_QUEUE_NUM -> {
                requireProtocol(VhostUser.PROTOCOL_F_MQ, "MQ");
                expect(m, 0, 0);
                return Message.u64(rings.length);
            }
            case VhostUser.GET_MAX_MEM_SLOTS -> {
                requireProtocol(VhostUser.PROTOCOL_F_CONFIGURE_MEM_SLOTS, "CONFIGURE_MEM_SLOTS");
                expect(m, 0, 0);
                return Message.u64(MAX_MEM_SLOTS);
            }
            case VhostUser.SET_MEM_TABLE -> {
                setMemTable(m);
                return null;
            }
            case VhostUser.ADD_MEM_REG -> {
                requireProtocol(VhostUser.PROTOCOL_F_CONFIGURE_MEM_SLOTS, "CONFIGURE_MEM_SLOTS");
                addMemReg(m);
                return null;
            }
            case VhostUser.REM_MEM_REG -> {
                requireProtocol(VhostUser.PROTOCOL_F_CONFIGURE_MEM_SLOTS, "CONFIGURE_MEM_SLOTS");
                remMemReg(m);
                return null;
            }
            case VhostUser.SET_VRING_NUM -> {
                expect(m, 8, 0);
                ByteBuffer b = m.body();
                Vring r = ring(b.getInt());
                int num = b.getInt();
                // The front-end owns the ring's size (section 2.7: a power of two up to 32768), whatever the
                // disk's in-process queue size is.
                if (num < 1 || num > VhostUser.MAX_QUEUE_SIZE || Integer.bitCount(num) != 1) {
                    throw new Refused("queue " + r.index + " size " + Integer.toUnsignedString(num)
                            + " is not a power of two in 1.." + VhostUser.MAX_QUEUE_SIZE);
                }
                stopIfRunning(r);
                r.num = num;
                reconcile();
                return null;
            }
            case VhostUser.SET_VRING_BASE -> {
                expect(m, 8, 0);
                ByteBuffer b = m.body();
                Vring r = ring(b.getInt());
                int base = b.getInt();
                if (base < 0 || base > 0xffff) {
                    throw new Refused("queue " + r.index + " base " + Integer.toUnsignedString(base)
                            + " is not a 16-bit ring index");
                }
                stopIfRunning(r);
                r.nextAvail = base;
                r.nextUsed = -1;
                reconcile();
                return null;
            }
            case VhostUser.GET_VRING_BASE -> {
                expect(m, 8, 0);
                Vring r = ring(m.body().getInt());
                return getVringBase(r);
            }
            case VhostUser.SET_VRING_ADDR -> {
                setVringAddr(m);
                return null;
            }
            case VhostUser.SET_VRING_KICK -> {
                setVringKick(m);
                return null;
            }
            case VhostUser.SET_VRING_CALL -> {
                FdArg a = fdArg(m);
                Notifier old = a.ring.call;
                a.ring.call = a.fd == null ? null : new Notifier("call of queue " + a.ring.index, a.fd);
                a.ring.callNoFd = a.fd == null;
                if (old != null) {
                    old.close();
                }
                return null;
            }
            case VhostUser.SET_VRING_ERR -> {
                FdArg a = fdArg(m);
                Notifier old = a.ring.err;
                a.ring.err = a.fd == null ? null : new Notifier("error of queue " + a.ring.index, a.fd);
                if (old != null) {
                    old.close();
                }
                return null;
            }
            case VhostUser.SET_VRING_ENABLE -> {
                expect(m, 8, 0);
                ByteBuffer b = m.body();
                Vring r = ring(b.getInt());
                int enable = b.getInt();
                if (enable != 0 && enable != 1) {
                    throw new Refused("queue " + r.index + " enable value " + enable + " is neither 0 nor 1");
                }
                r.enabled = enable == 1;
                reconcile();
                return null;
            }
            case VhostUser.GET_CONFIG -> {
                requireProtocol(VhostUser.PROTOCOL_F_CONFIG, "CONFIG");
                return getConfig(m);
            }
            case VhostUser.SET_CONFIG -> {
                requireProtocol(VhostUser.PROTOCOL_F_CONFIG, "CONFIG");
                setConfig(m);
                return null;
            }
            case VhostUser.GET_INFLIGHT_FD -> {
                requireProtocol(VhostUser.PROTOCOL_F_INFLIGHT_SHMFD, "INFLIGHT_SHMFD");
                return getInflightFd(m);
            }
            case VhostUser.SET_INFLIGHT_FD -> {
                requireProtocol(VhostUser.PROTOCOL_F_INFLIGHT_SHMFD, "INFLIGHT_SHMFD");
                setInflightFd(m);
                return null;
            }
            case VhostUser.SET_BACKEND_REQ_FD -> {
                requireProtocol(VhostUser.PROTOCOL_F_BACKEND_REQ, "BACKEND_REQ");
                expect(m, 0, 1);
                setBackendChannel(m.fds()[0]);
                return null;
            }
            default -> throw new Refused("request " + m.request() + " (" + m.name() + ") is not supported"
                    + " by this backend (" + m.size() + " payload bytes, " + m.fds().length + " fds)");
        }
    }

    // Checks.

    private static void expect(Message m, int size, int fds) throws Refused {
        if (m.size() != size) {
            throw new Refused("payload of " + m.size() + " bytes, expected " + size);
        }
        if (m.fds().length != fds) {
            throw new Refused(m.fds().length + " file descriptors, expected " + fds);
        }
    }

    private void requireProtocol(long feature, String label) throws Refused {
        if ((protocolFeatures & feature) == 0) {
            throw new Refused("protocol feature " + label + " was not negotiated");
        }
    }

    private Vring ring(int index) throws Refused {
        if (index < 0 || index >= rings.length) {
            throw new Refused("queue index " + Integer.toUnsignedString(index) + " is out of range (the device has "
                    + rings.length + " queues)");
        }
        return rings[index];
    }

    // Features.

    private void setFeatures(long f) throws Refused {
        long offered = offeredFeatures();
        if ((f & ~offered) != 0) {
            throw new Refused(String.format("features 0x%x were not offered (offered 0x%x)", f & ~offered, offered));
        }
        long virtio = f & ~VhostUser.F_PROTOCOL_FEATURES;
        if (!device.acceptsFeatures(virtio)) {
            throw new Refused(String.format("the device does not accept features 0x%x", virtio));
        }
        if ((virtio & VirtioFeatures.VERSION_1) == 0) {
            LOG.log(Level.INFO, "vhost-user " + name + ": front-end acked features without VIRTIO_F_VERSION_1");
        }
        stopDevice();
        ackedFeatures = f;
        featuresSet = true;
        reconcile();
    }

    // Memory.

    private void setMemTable(Message m) throws Refused {
        if (m.size() < 8) {
            throw new Refused("payload of " + m.size() + " bytes is shorter than the 8-byte region count");
        }
        ByteBuffer b = m.body();
        int n = b.getInt();
        b.getInt(); // padding
        if (n < 1 || n > VhostUser.MEM_TABLE_MAX_REGIONS) {
            throw new Refused("region count " + Integer.toUnsignedString(n) + " is not in 1.."
                    + VhostUser.MEM_TABLE_MAX_REGIONS);
        }
        if (m.size() != 8 + n * VhostUser.REGION_SIZE) {
            throw new Refused("payload of " + m.size() + " bytes does not hold " + n + " regions (expected "
                    + (8 + n * VhostUser.REGION_SIZE) + ")");
        }
        if (m.fds().length != n) {
            throw new Refused(m.fds().length + " file descriptors for " + n + " regions");
        }
        List<MemoryTable.Region> fresh = new ArrayList<>();
        long[][] desc = new long[n][];
        for (int i = 0; i < n; i++) {
            long gpa = b.getLong();
            long size = b.getLong();
            long uva = b.getLong();
            long off = b.getLong();
            String bad = MemoryTable.checkShape(gpa, size, uva, off);
            if (bad == null) {
                bad = overlapAmong(desc, i, gpa, size, uva);
            }
            if (bad != null) {
                throw new Refused("region " + i + ": " + bad);
            }
            desc[i] = new long[] {gpa, size, uva, off};
        }
        FileDescriptor[] fds = m.fds();
        try {
            for (int i = 0; i < n; i++) {
                fresh.add(MemoryTable.map(fds[i], desc[i][0], desc[i][1], desc[i][2], desc[i][3]));
                fds[i] = null;
            }
        } catch (IOException e) {
            Fds.closeAll(fds);
            MappingRelease.release(name, true, fresh, null); // never used: nothing can touch them
            throw new Refused("cannot map region " + fresh.size() + ": " + e.getMessage(), e);
        }
        stopDevice();
        List<MemoryTable.Region> replaced = memoryTable.clear();
        fresh.forEach(memoryTable::add);
        rebuildMemory();
        MappingRelease.release(name, resetsClean, replaced, null);
        LOG.log(Level.INFO, "vhost-user " + name + ": memory table of " + n + " regions, "
                + memoryTable.totalBytes() + " bytes");
        reconcile();
    }

    private static String overlapAmong(long[][] desc, int count, long gpa, long size, long uva) {
        List<MemoryTable.Region> earlier = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            earlier.add(new MemoryTable.Region(desc[i][0], desc[i][1], desc[i][2], desc[i][3], List.of()));
        }
        return MemoryTable.overlap(earlier, gpa, size, uva);
    }

    private void addMemReg(Message m) throws Refused {
        expect(m, 8 + VhostUser.REGION_SIZE, 1);
        ByteBuffer b = m.body();
        b.getLong(); // padding
        long gpa = b.getLong();
        long size = b.getLong();
        long uva = b.getLong();
        long off = b.getLong();
        String bad = MemoryTable.checkShape(gpa, size, uva, off);
        if (bad == null) {
            bad = MemoryTable.overlap(memoryTable.regions(), gpa, size, uva);
        }
        if (bad == null && memoryTable.count() >= MAX_MEM_SLOTS) {
            bad = "all " + MAX_MEM_SLOTS + " memory slots are in use";
        }
        if (bad != null) {
            throw new Refused(bad);
        }
        MemoryTable.Region r;
        try {
            r = MemoryTable.map(m.fds()[0], gpa, size, uva, off);
        } catch (IOException e) {
            throw new Refused("cannot map the region: " + e.getMessage(), e);
        }
        stopDevice();
        memoryTable.add(r);
        rebuildMemory();
        LOG.log(Level.INFO, "vhost-user " + name + ": added memory region " + r);
        reconcile();
    }

    private void remMemReg(Message m) throws Refused {
        if (m.size() != 8 + VhostUser.REGION_SIZE) {
            throw new Refused("payload of " + m.size() + " bytes, expected " + (8 + VhostUser.REGION_SIZE));
        }
        // Some front-ends pass the region's descriptor again; it is not needed.
        if (m.fds().length > 1) {
            throw new Refused(m.fds().length + " file descriptors, expected 0 or 1");
        }
        Fds.closeAll(m.fds());
        ByteBuffer b = m.body();
        b.getLong();
        long gpa = b.getLong();
        long size = b.getLong();
        long uva = b.getLong();
        boolean known = memoryTable.regions().stream().anyMatch(r -> r.sameIdentity(gpa, size, uva));
        if (!known) {
            throw new Refused(String.format("no region at guest address 0x%x, size 0x%x, user address 0x%x", gpa,
                    size, uva));
        }
        stopDevice();
        MemoryTable.Region removed = memoryTable.remove(gpa, size, uva);
        rebuildMemory();
        MappingRelease.release(name, resetsClean, List.of(removed), null);
        LOG.log(Level.INFO, String.format("vhost-user %s: removed memory region at guest address 0x%x", name, gpa));
        reconcile();
    }

    private void rebuildMemory() {
        memory = memoryTable.build(memoryFactory);
        memoryRegions = memoryTable.count();
        memoryBytes = memoryTable.totalBytes();
    }

    // Rings.

    private void setVringAddr(Message m) throws Refused {
        expect(m, 40, 0);
        ByteBuffer b = m.body();
        Vring r = ring(b.getInt());
        int flags = b.getInt();
        long desc = b.getLong();
        long used = b.getLong();
        long avail = b.getLong();
        b.getLong(); // log_guest_addr: logging is not offered
        if ((flags & ~1) != 0) {
            throw new Refused("queue " + r.index + " address flags 0x" + Integer.toHexString(flags) + " unknown");
        }
        if (memoryTable.count() == 0) {
            throw new Refused("queue " + r.index + " addresses given before any memory region");
        }
        int size = r.num > 0 ? r.num : device.maxQueueSize();
        checkRingPart(r, "descriptor table", desc, QueueLayout.descTableBytes(size));
        checkRingPart(r, "available ring", avail, QueueLayout.availRingBytes(size));
        checkRingPart(r, "used ring", used, QueueLayout.usedRingBytes(size));
        stopIfRunning(r);
        r.descUser = desc;
        r.availUser = avail;
        r.usedUser = used;
        r.addressesSet = true;
        reconcile();
    }

    private void checkRingPart(Vring r, String what, long uva, long length) throws Refused {
        if (memoryTable.translate(uva, length) == -1) {
            throw new Refused(String.format("queue %d %s at user address 0x%x (+%d) lies outside every memory region",
                    r.index, what, uva, length));
        }
    }

    /** The queue index and descriptor of SET_VRING_KICK / CALL / ERR; a null fd means NOFD. */
    private record FdArg(Vring ring, FileDescriptor fd) {
    }

    private FdArg fdArg(Message m) throws Refused {
        if (m.size() != 8) {
            throw new Refused("payload of " + m.size() + " bytes, expected 8");
        }
        long v = m.body().getLong();
        if ((v & ~(VhostUser.VRING_IDX_MASK | VhostUser.VRING_NOFD_MASK)) != 0) {
            throw new Refused(String.format("payload 0x%x has bits other than the index and NOFD", v));
        }
        boolean noFd = (v & VhostUser.VRING_NOFD_MASK) != 0;
        int expected = noFd ? 0 : 1;
        if (m.fds().length != expected) {
            throw new Refused(m.fds().length + " file descriptors, expected " + expected
                    + (noFd ? " (NOFD flag set)" : ""));
        }
        Vring r = ring((int) (v & VhostUser.VRING_IDX_MASK));
        return new FdArg(r, noFd ? null : m.fds()[0]);
    }

    private void setVringKick(Message m) throws Refused {
        FdArg a = fdArg(m);
        if (a.fd == null) {
            throw new Refused("queue " + a.ring.index + ": kick without a descriptor (ring polling) is not supported");
        }
        Vring r = a.ring;
        FileDescriptor old = r.kick;
        r.kick = a.fd;
        // register() returns once the poll thread uses the new descriptor, so the old one may be closed.
        poller.register(r.index, a.fd);
        if (old != null) {
            Fds.close(old);
        }
        r.started = true;
        if ((ackedFeatures & VhostUser.F_PROTOCOL_FEATURES) == 0) {
            // vhost-user.rst "Starting and stopping rings": without the feature a started ring is enabled.
            r.enabled = true;
        }
        boolean wasRunning = r.view != null;
        reconcile();
        if (wasRunning) {
            device.queueNotify(r.index); // a kick may have gone to the old descriptor
        }
    }

    private byte[] getVringBase(Vring r) {
        if (r.view != null) {
            stopDevice();
        }
        r.started = false;
        if (r.kick != null) {
            poller.unregister(r.index);
            Fds.close(r.kick);
            r.kick = null;
        }
        // libvhost-user closes the call descriptor too; the front-end sends a new one with the next start.
        Notifier call = r.call;
        r.call = null;
        if (call != null) {
            call.close();
        }
        byte[] reply = Message.vringState(r.index, r.nextAvail);
        reconcile();
        return reply;
    }

    // Inflight I/O tracking (vhost-user.rst "Inflight I/O tracking"; payload VhostUserInflight:
    // u64 mmap_size, u64 mmap_offset, u16 num_queues, u16 queue_size, padded to 24 bytes).

    private static final int INFLIGHT_PAYLOAD = 24;

    /** num_queues and queue_size of a GET/SET_INFLIGHT_FD payload, checked. */
    private int[] inflightShape(ByteBuffer b) throws Refused {
        int numQueues = b.getShort(16) & 0xffff;
        int queueSize = b.getShort(18) & 0xffff;
        if (numQueues < 1 || numQueues > rings.length) {
            throw new Refused("inflight area for " + numQueues + " queues; the device has " + rings.length);
        }
        if (queueSize < 1 || queueSize > VhostUser.MAX_QUEUE_SIZE || Integer.bitCount(queueSize) != 1) {
            throw new Refused("inflight queue size " + queueSize + " is not a power of two in 1.."
                    + VhostUser.MAX_QUEUE_SIZE);
        }
        return new int[] {numQueues, queueSize};
    }

    private byte[] getInflightFd(Message m) throws Refused {
        expect(m, INFLIGHT_PAYLOAD, 0);
        int[] shape = inflightShape(m.body());
        try {
            replyArea = InflightRegion.create(shape[0], shape[1]);
        } catch (IOException e) {
            throw new Refused("cannot create the inflight area: " + e.getMessage(), e);
        }
        return Message.payload(INFLIGHT_PAYLOAD).putLong(replyArea.region().mmapSize()).putLong(0)
                .putShort((short) shape[0]).putShort((short) shape[1]).array();
    }

    private void setInflightFd(Message m) throws Refused {
        expect(m, INFLIGHT_PAYLOAD, 1);
        ByteBuffer b = m.body();
        long mmapSize = b.getLong(0);
        long offset = b.getLong(8);
        // A refusal closes the descriptor (refuse()).
        int[] shape = inflightShape(b);
        long want = InflightRegion.totalBytes(shape[0], shape[1]);
        if (mmapSize != want || offset < 0 || offset + mmapSize < 0) {
            throw new Refused(String.format("inflight area of 0x%x bytes at offset 0x%x; %d queues of %d need 0x%x",
                    mmapSize, offset, shape[0], shape[1], want));
        }
        InflightRegion region;
        try {
            region = InflightRegion.map(m.fds()[0], mmapSize, offset, shape[0], shape[1]);
        } catch (IOException e) {
            throw new Refused("cannot map the inflight area: " + e.getMessage(), e);
        }
        stopDevice();
        InflightRegion previous = inflight;
        inflight = region;
        MappingRelease.release(name, resetsClean, null, previous);
        reconcile();
    }

    // Configuration space.

    private byte[] getConfig(Message m) throws Refused {
        int[] hdr = configHeader(m);
        int offset = hdr[0];
        int size = hdr[1];
        if (m.size() != VhostUser.CONFIG_HEADER_SIZE + size) {
            throw new Refused("payload of " + m.size() + " bytes for a " + size + "-byte configuration read");
        }
        ByteBuffer out = Message.payload(VhostUser.CONFIG_HEADER_SIZE + size);
        out.putInt(offset).putInt(size).putInt(hdr[2]);
        for (int i = 0; i < size; i++) {
            out.put((byte) device.readConfig(offset + i, 1));
        }
        return out.array();
    }

    private void setConfig(Message m) throws Refused {
        int[] hdr = configHeader(m);
        int offset = hdr[0];
        int size = hdr[1];
        if (m.size() != VhostUser.CONFIG_HEADER_SIZE + size) {
            throw new Refused("payload of " + m.size() + " bytes for a " + size + "-byte configuration write");
        }
        ByteBuffer b = m.body();
        b.position(VhostUser.CONFIG_HEADER_SIZE);
        for (int i = 0; i < size; i++) {
            device.writeConfig(offset + i, 1, b.get() & 0xff);
        }
    }

    /** offset, size, flags of a GET_CONFIG / SET_CONFIG payload, checked against the 256-byte space. */
    private static int[] configHeader(Message m) throws Refused {
        if (m.fds().length != 0) {
            throw new Refused(m.fds().length + " file descriptors, expected 0");
        }
        if (m.size() < VhostUser.CONFIG_HEADER_SIZE) {
            throw new Refused("payload of " + m.size() + " bytes is shorter than the configuration header");
        }
        ByteBuffer b = m.body();
        int offset = b.getInt();
        int size = b.getInt();
        int flags = b.getInt();
        if (offset < 0 || size < 0 || offset > VhostUser.MAX_CONFIG_SIZE
                || size > VhostUser.MAX_CONFIG_SIZE - offset) {
            throw new Refused("configuration range offset " + Integer.toUnsignedString(offset) + " size "
                    + Integer.toUnsignedString(size) + " is outside the " + VhostUser.MAX_CONFIG_SIZE
                    + "-byte space");
        }
        return new int[] {offset, size, flags};
    }

    // Device start and stop.

    /** Stops the device when {@code r} is one of its running queues (before changing that queue). */
    private void stopIfRunning(Vring r) {
        if (r.view != null) {
            stopDevice();
        }
    }

    /**
     * Resets the device if it runs (waiting for in-flight requests), saving each running queue's indices.
     * {@link #reconcile()} starts it again.
     */
    private void stopDevice() {
        if (!running) {
            return;
        }
        runningQueues = new boolean[rings.length];
        try {
            device.reset();
            // A reset that gave up waiting leaves a request that may still write guest memory.
            resetsClean &= device.quiescent();
        } catch (RuntimeException e) {
            resetsClean = false;
            LOG.log(Level.ERROR, "vhost-user " + name + ": device reset failed", e);
        }
        running = false;
        for (Vring r : rings) {
            if (r.view != null) {
                r.nextAvail = r.view.nextAvail();
                r.nextUsed = r.view.nextUsed();
                if (r.view instanceof InflightQueue iq && iq.resubmitPending() > 0) {
                    // Stopped before the previous back-end's requests were all taken: the next start
                    // recovers them from the area again.
                    r.nextUsed = -1;
                }
                r.view = null;
            }
        }
    }

    private boolean ready(Vring r) {
        return r.configured() && r.started && r.enabled && memory != null;
    }

    /** Makes the running set equal the ready set: stops and restarts the device when they differ. */
    private void reconcile() {
        boolean[] want = new boolean[rings.length];
        boolean any = false;
        boolean same = running;
        for (Vring r : rings) {
            want[r.index] = ready(r);
            any |= want[r.index];
            same &= want[r.index] == (r.view != null);
        }
        if (same && running) {
            return;
        }
        stopDevice();
        if (!any) {
            // Every ring stopped: the front-end resets or pauses the device; a latched fault is cleared.
            needsReset = false;
            return;
        }
        if (needsReset) {
            LOG.log(Level.WARNING, "vhost-user " + name + ": not starting the device: it needs a reset after "
                    + lastFault);
            return;
        }
        start(want);
    }

    private void start(boolean[] want) {
        long features = ackedFeatures & ~VhostUser.F_PROTOCOL_FEATURES;
        if (!featuresSet) {
            LOG.log(Level.INFO, "vhost-user " + name + ": rings started before SET_FEATURES; using no features");
        }
        List<DeviceQueue> views = new ArrayList<>(Collections.nCopies(rings.length, (DeviceQueue) null));
        boolean[] runningNow = new boolean[rings.length];
        for (Vring r : rings) {
            if (!want[r.index]) {
                continue;
            }
            try {
                r.view = createView(r, features);
                views.set(r.index, r.view);
                runningNow[r.index] = true;
            } catch (Refused | GuestFaultException e) {
                LOG.log(Level.WARNING, "vhost-user " + name + ": queue " + r.index + " not started: "
                        + e.getMessage());
                signalError(r);
            }
        }
        if (Arrays.equals(runningNow, new boolean[rings.length])) {
            return;
        }
        List<DeviceQueue> list = Collections.unmodifiableList(views);
        GuestMemory mem = memory;
        // Publish the running set before activating: a kick that arrives from now on reaches the device.
        // Published after activate(), a kick landing between the activation's look at every queue and the
        // publication was dropped, and a request the driver added after that look waited forever (issue 13:
        // NOFD + EVENT_IDX, the driver kicks once and only when avail_event asks). A kick that reaches the
        // device before activate() sets its queues is harmless: the activation looks at every queue after it.
        runningQueues = runningNow;
        try {
            device.activate(new DeviceActivation() {
                @Override
                public long negotiatedFeatures() {
                    return features;
                }

                @Override
                public GuestMemory memory() {
                    return mem;
                }

                @Override
                public List<DeviceQueue> queues() {
                    return list;
                }

                @Override
                public DeviceSignals signals() {
                    return VhostUserBackend.this;
                }
            });
        } catch (RuntimeException e) {
            LOG.log(Level.ERROR, "vhost-user " + name + ": device activation failed", e);
            try {
                device.reset(); // it may have started some queues before failing
                resetsClean &= device.quiescent();
            } catch (RuntimeException again) {
                resetsClean = false;
            }
            runningQueues = new boolean[rings.length];
            for (Vring r : rings) {
                r.view = null;
            }
            return;
        }
        running = true;
        activations.incrementAndGet();
        LOG.log(Level.DEBUG, () -> "vhost-user " + name + ": running queues " + describe(runningNow));
    }

    private DeviceQueue createView(Vring r, long features) throws Refused {
        long desc = translate(r, "descriptor table", r.descUser, QueueLayout.descTableBytes(r.num));
        long avail = translate(r, "available ring", r.availUser, QueueLayout.availRingBytes(r.num));
        long used = translate(r, "used ring", r.usedUser, QueueLayout.usedRingBytes(r.num));
        QueueLayout layout = new QueueLayout(r.num, desc, avail, used);
        int nextUsed = r.nextUsed;
        InflightRegion area = inflight;
        if (area != null && r.index < area.queueCount()) {
            if (r.num > area.queueSize()) {
                throw new Refused("queue " + r.index + " size " + r.num + " exceeds the inflight area's "
                        + area.queueSize());
            }
            int usedIdx = memory.readU16(used + 2) & 0xffff;
            InflightQueue.Recovery rec = InflightQueue.recover(area.queue(r.index), usedIdx, r.num);
            if (!rec.fresh() && rec.nextAvail() != r.nextAvail) {
                LOG.log(Level.INFO, "vhost-user " + name + ": queue " + r.index + " continues at available index "
                        + rec.nextAvail() + " (used " + usedIdx + " + " + rec.resubmit().size()
                        + " in flight) instead of " + r.nextAvail);
            }
            if (!rec.resubmit().isEmpty()) {
                resubmitted.addAndGet(rec.resubmit().size());
                LOG.log(Level.INFO, "vhost-user " + name + ": queue " + r.index + " resubmits "
                        + rec.resubmit().size() + " requests of an earlier back-end: heads " + rec.resubmit());
            }
            int start = rec.fresh() ? r.nextAvail : rec.nextAvail();
            DeviceQueue q = queueFactory.createDeviceQueue(memory, r.index, layout, features, start, usedIdx);
            return new InflightQueue(q, area.queue(r.index), rec);
        }
        if (nextUsed < 0) {
            // After SET_VRING_BASE the used index is whatever the ring holds (libvhost-user reads it too).
            nextUsed = memory.readU16(used + 2) & 0xffff;
            if (nextUsed != r.nextAvail) {
                LOG.log(Level.WARNING, "vhost-user " + name + ": queue " + r.index + " starts with used index "
                        + nextUsed + " but available index " + r.nextAvail + ": " + ((r.nextAvail - nextUsed) & 0xffff)
                        + " requests of an earlier backend were lost (no inflight tracking)");
            }
        }
        return queueFactory.createDeviceQueue(memory, r.index, layout, features, r.nextAvail, nextUsed);
    }

    private long translate(Vring r, String what, long uva, long length) throws Refused {
        long gpa = memoryTable.translate(uva, length);
        if (gpa == -1) {
            throw new Refused(String.format("%s at user address 0x%x (+%d) lies outside every memory region", what,
                    uva, length));
        }
        return gpa;
    }

    private static String describe(boolean[] set) {
        List<Integer> q = new ArrayList<>();
        for (int i = 0; i < set.length; i++) {
            if (set[i]) {
                q.add(i);
            }
        }
        return q.toString();
    }

    /**
     * RESET_OWNER / RESET_DEVICE: stop the device, forget every ring and the inflight area (the front-end sends
     * it again with the next start) and unmap this back-end's mapping of it. RESET_OWNER ends the session
     * (vhost-user.rst: the front-end no longer owns the connection), so its memory is unmapped too, as DPDK
     * does. RESET_DEVICE keeps the memory, as libvhost-user does: QEMU sends only the regions that changed
     * since its last table (its shadow copy), so after a RESET_DEVICE it would not send them again.
     */
    private void resetDevice(boolean endOfSession) {
        stopDevice();
        for (int i = 0; i < rings.length; i++) {
            closeRing(rings[i]);
            rings[i] = new Vring(i);
        }
        ackedFeatures = 0;
        featuresSet = false;
        if (endOfSession) {
            releaseMemory();
        } else {
            InflightRegion area = inflight;
            inflight = null;
            MappingRelease.release(name, resetsClean && !running, null, area);
        }
        needsReset = false;
        lastFault = null;
    }

    /** After the device stopped: drops and unmaps every memory region and the inflight area's mapping. */
    private void releaseMemory() {
        InflightRegion area = inflight;
        inflight = null;
        List<MemoryTable.Region> regions = memoryTable.clear();
        rebuildMemory();
        MappingRelease.release(name, resetsClean && !running, regions, area);
    }

    private void closeRing(Vring r) {
        if (r.kick != null) {
            poller.unregister(r.index);
            Fds.close(r.kick);
            r.kick = null;
        }
        Notifier c = r.call;
        r.call = null;
        if (c != null) {
            c.close();
        }
        Notifier e = r.err;
        r.err = null;
        if (e != null) {
            e.close();
        }
    }

    // Kicks and signals.

    private void kicked(int queue) {
        // runningQueues is published (volatile) before the device is activated (start()), so a kick that
        // passes this check after the activation looked at the rings reaches the device.
        boolean[] q = runningQueues;
        if (!needsReset && queue < q.length && q[queue]) {
            device.queueNotify(queue);
        }
        // Otherwise the queue is not running: activation looks at every queue once (2.7.10.2 tolerates
        // spurious and early notifications).
    }

    @Override
    public void usedBuffer(int queueIndex) {
        if (queueIndex < 0 || queueIndex >= rings.length) {
            return;
        }
        Vring r = rings[queueIndex];
        Notifier call = r.call;
        // A queue set up with NOFD (a Linux poll queue) is never notified: the driver polls its used ring.
        if (call != null && call.signal()) {
            interrupts.incrementAndGet();
        }
    }

    @Override
    public void configChanged() {
        BackendChannel c = backendChannel;
        if (c != null && c.configChanged()) {
            return;
        }
        if (!configChangeLogged) {
            configChangeLogged = true;
            LOG.log(Level.INFO, "vhost-user " + name + ": configuration change not signalled (no back-end"
                    + " request channel" + (c == null ? " was set up)" : ": " + c.closeReason() + ")"));
        }
    }

    private void setBackendChannel(FileDescriptor fd) throws Refused {
        BackendChannel fresh;
        try {
            fresh = BackendChannel.open(name, fd, replyAck(), BackendChannel.REPLY_TIMEOUT_MILLIS);
        } catch (IOException e) {
            throw new Refused(e.getMessage(), e);
        }
        BackendChannel old = backendChannel;
        backendChannel = fresh;
        configChangeLogged = false;
        if (old != null) {
            old.close();
        }
    }

    @Override
    public void deviceError(GuestFaultException fault) {
        if (needsReset) {
            return;
        }
        needsReset = true;
        lastFault = fault.getMessage();
        LOG.log(Level.WARNING, "vhost-user " + name + ": device needs reset: " + fault.getMessage()
                + " (queues stop until the front-end stops and restarts the device)");
        // There is no status register on vhost-user: tell the front-end through the error eventfds.
        for (Vring r : rings) {
            signalError(r);
        }
    }

    private static void signalError(Vring r) {
        Notifier err = r.err;
        if (err != null) {
            err.signal();
        }
    }

    @Override
    public boolean needsReset() {
        return needsReset;
    }

    /** Ends the session: stops the device, closes every descriptor and the kick thread. */
    @Override
    public void close() {
        try {
            stopDevice();
        } finally {
            for (Vring r : rings) {
                closeRing(r);
            }
            poller.close();
            BackendChannel c = backendChannel;
            backendChannel = null;
            if (c != null) {
                c.close();
            }
            releaseMemory();
        }
    }

    /** A snapshot for the shell. */
    public Status status() {
        int runningCount = 0;
        StringBuilder nofd = new StringBuilder();
        boolean[] q = runningQueues;
        for (int i = 0; i < q.length; i++) {
            if (q[i]) {
                runningCount++;
            }
            if (rings[i].callNoFd) {
                nofd.append(nofd.length() == 0 ? "" : ",").append(i);
            }
        }
        return new Status(owner, ackedFeatures, protocolFeatures, memoryRegions, memoryBytes,
                runningCount, nofd.toString(), messages.get(), refusals.get(), poller.kicksSeen(), interrupts.get(),
                activations.get(), needsReset, lastRefusal);
    }

    /** What {@code kp:vhost-list} shows of a connection. */
    public record Status(boolean owner, long features, long protocolFeatures, int memoryRegions, long memoryBytes,
            int runningQueues, String pollQueues, long messages, long refusals, long kicks, long interrupts,
            long activations, boolean needsReset, String lastRefusal) {
    }
}
