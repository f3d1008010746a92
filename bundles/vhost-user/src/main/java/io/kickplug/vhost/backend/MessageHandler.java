package io.kickplug.vhost.backend;

import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.VirtioDevice;
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
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The protocol half of one vhost-user connection: it reads the front-end's messages
 * (docs/interop/vhost-user.rst), checks each one's payload, descriptors and negotiated protocol features,
 * carries it out on the connection's {@link BackendDevice} (memory table, vrings, inflight area, eventfds,
 * device activation) and writes the reply.
 *
 * <p>Inflight I/O tracking (INFLIGHT_SHMFD): GET_INFLIGHT_FD creates the shared area ({@link InflightRegion})
 * and sends its descriptor; SET_INFLIGHT_FD maps the one the front-end keeps and hands it to the device side.
 *
 * <p>Threading: {@link #handle} runs on the connection's message thread only; {@link #status()} on any thread.
 */
public final class MessageHandler implements Closeable {

    private static final Logger LOG = System.getLogger(MessageHandler.class.getName());

    /** Protocol features offered. */
    public static final long PROTOCOL_FEATURES = VhostUser.PROTOCOL_F_MQ | VhostUser.PROTOCOL_F_REPLY_ACK
            | VhostUser.PROTOCOL_F_CONFIG | VhostUser.PROTOCOL_F_CONFIGURE_MEM_SLOTS
            | VhostUser.PROTOCOL_F_RESET_DEVICE | VhostUser.PROTOCOL_F_INFLIGHT_SHMFD
            | VhostUser.PROTOCOL_F_BACKEND_REQ | VhostUser.PROTOCOL_F_LOG_SHMFD;
    /** GET_MAX_MEM_SLOTS answer. */
    public static final int MAX_MEM_SLOTS = 32;

    /** Where replies go. */
    @FunctionalInterface
    public interface Replier {
        /** Sends a reply; {@code fds} (may be {@code null}) go along as SCM_RIGHTS. */
        void reply(int request, byte[] payload, FileDescriptor[] fds) throws IOException;
    }

    private final String name;
    private final Replier replier;
    private final BackendDevice dev;
    /** A descriptor to send with the reply being built (GET_INFLIGHT_FD), closed after sending. */
    private InflightRegion.Created replyArea;
    private volatile boolean owner;
    private volatile long protocolFeatures;
    private volatile String lastRefusal;
    private final AtomicLong messages = new AtomicLong();
    private final AtomicLong refusals = new AtomicLong();

    /**
     * @param name the disk or export name, for thread and log names
     * @param replier where replies are written (the connection's socket)
     */
    public MessageHandler(String name, VirtioDevice device, VirtqueueFactory queueFactory,
            GuestMemoryFactory memoryFactory, Replier replier) throws IOException {
        this(name, device, queueFactory, memoryFactory, replier, MarksCarry.NONE);
    }

    /**
     * @param carry where the marks the session's dirty log holds at its end go, and where the marks earlier
     *     sessions of the export left come from (see {@link MarksCarry})
     */
    public MessageHandler(String name, VirtioDevice device, VirtqueueFactory queueFactory,
            GuestMemoryFactory memoryFactory, Replier replier, MarksCarry carry) throws IOException {
        this.name = name;
        this.replier = replier;
        this.dev = new BackendDevice(name, device, queueFactory, memoryFactory, carry);
    }

    /** Virtio features offered: the device's plus VHOST_USER_F_PROTOCOL_FEATURES. */
    public long offeredFeatures() {
        return dev.offeredFeatures();
    }

    /**
     * Carries out one message and writes its reply, if any. A message that is malformed or not allowed now is
     * refused: one log line, its descriptors closed, and an error reply where the protocol has one (REPLY_ACK
     * with a non-zero status, or an empty payload for requests that always answer). Never throws for bad
     * input; an {@link IOException} means the reply could not be written.
     */
    public void handle(Message m) throws IOException {
        messages.incrementAndGet();
        if (LOG.isLoggable(Level.DEBUG)) {
            LOG.log(Level.DEBUG, "vhost-user " + name + ": <- " + describe(m.request(), m.payload(), m.fds().length)
                    + (m.needReply() ? " (need reply)" : ""));
        }
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
        if (LOG.isLoggable(Level.DEBUG) && (reply != null || (m.needReply() && replyAck()))) {
            LOG.log(Level.DEBUG, "vhost-user " + name + ": -> " + (reply != null
                    ? describe(m.request(), reply, replyArea != null ? 1 : 0) : m.name() + " ack 0"));
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

    /** One message for the debug log: its name, the fields that matter for the rings, else the payload in hex. */
    static String describe(int request, byte[] payload, int fds) {
        ByteBuffer b = ByteBuffer.wrap(payload).order(java.nio.ByteOrder.LITTLE_ENDIAN);
        StringBuilder s = new StringBuilder(VhostUser.name(request));
        try {
            switch (request) {
                case VhostUser.SET_VRING_NUM, VhostUser.SET_VRING_BASE, VhostUser.GET_VRING_BASE,
                        VhostUser.SET_VRING_ENABLE -> {
                    s.append(" queue ").append(b.getInt(0));
                    if (payload.length >= 8) {
                        s.append(" num ").append(Integer.toUnsignedString(b.getInt(4)));
                    }
                }
                case VhostUser.SET_VRING_KICK, VhostUser.SET_VRING_CALL, VhostUser.SET_VRING_ERR -> {
                    long v = b.getLong(0);
                    s.append(" queue ").append(v & VhostUser.VRING_IDX_MASK)
                            .append((v & VhostUser.VRING_NOFD_MASK) != 0 ? " NOFD" : "");
                }
                case VhostUser.SET_VRING_ADDR -> s.append(String.format(" queue %d flags 0x%x desc 0x%x used 0x%x avail 0x%x",
                        b.getInt(0), b.getInt(4), b.getLong(8), b.getLong(16), b.getLong(24)));
                case VhostUser.GET_FEATURES, VhostUser.SET_FEATURES, VhostUser.GET_PROTOCOL_FEATURES,
                        VhostUser.SET_PROTOCOL_FEATURES, VhostUser.GET_QUEUE_NUM, VhostUser.GET_MAX_MEM_SLOTS -> {
                    if (payload.length >= 8) {
                        s.append(String.format(" 0x%x", b.getLong(0)));
                    }
                }
                default -> {
                    s.append(" [").append(payload.length).append(" bytes");
                    for (int i = 0; i < Math.min(payload.length, 48); i++) {
                        s.append(i == 0 ? ": " : "").append(String.format("%02x", payload[i]));
                    }
                    s.append(payload.length > 48 ? "...]" : "]");
                }
            }
        } catch (IndexOutOfBoundsException e) {
            s.append(" (").append(payload.length).append(" bytes, short)");
        }
        return s.append(fds > 0 ? " +" + fds + " fd" : "").toString();
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
                    VhostUser.GET_INFLIGHT_FD, VhostUser.SET_LOG_BASE -> true;
            default -> false;
        };
    }

    private boolean replyAck() {
        return (protocolFeatures & VhostUser.PROTOCOL_F_REPLY_ACK) != 0;
    }

    /**
     * Returns the reply payload for requests that have one (those that {@link #alwaysReplies always reply}), else
     * {@code null}.
     */
    private byte[] dispatch(Message m) throws Refused {
        requireProtocol(m.request());
        if (alwaysReplies(m.request())) {
            return answer(m);
        }
        carryOut(m);
        return null;
    }

    /** A request that always replies: its reply payload. */
    private byte[] answer(Message m) throws Refused {
        return switch (m.request()) {
            case VhostUser.GET_FEATURES -> u64Answer(m, offeredFeatures());
            case VhostUser.GET_PROTOCOL_FEATURES -> u64Answer(m, PROTOCOL_FEATURES);
            case VhostUser.GET_QUEUE_NUM -> u64Answer(m, dev.queueCount());
            case VhostUser.GET_MAX_MEM_SLOTS -> u64Answer(m, MAX_MEM_SLOTS);
            case VhostUser.GET_VRING_BASE -> {
                int r = vringState(m).ring;
                yield Message.vringState(r, dev.stopRing(r));
            }
            case VhostUser.GET_CONFIG -> getConfig(m);
            case VhostUser.GET_INFLIGHT_FD -> getInflightFd(m);
            case VhostUser.SET_LOG_BASE -> setLogBase(m);
            default -> throw new IllegalStateException(m.name() + " is listed as always replying but has no answer");
        };
    }

    /** A request with no payload that answers one u64 ({@code value}). */
    private static byte[] u64Answer(Message m, long value) throws Refused {
        expect(m, 0, 0);
        return Message.u64(value);
    }

    /** A request without a reply payload (other than REPLY_ACK's, which {@link #handle} sends). */
    private void carryOut(Message m) throws Refused {
        switch (m.request()) {
            case VhostUser.SET_FEATURES -> {
                expect(m, 8, 0);
                setFeatures(m.body().getLong());
            }
            case VhostUser.SET_PROTOCOL_FEATURES -> {
                expect(m, 8, 0);
                long f = m.body().getLong();
                if ((f & ~PROTOCOL_FEATURES) != 0) {
                    throw new Refused(String.format("protocol features 0x%x were not offered (offered 0x%x)",
                            f & ~PROTOCOL_FEATURES, PROTOCOL_FEATURES));
                }
                protocolFeatures = f;
            }
            case VhostUser.SET_OWNER -> {
                expect(m, 0, 0);
                owner = true;
            }
            case VhostUser.RESET_OWNER -> {
                expect(m, 0, 0);
                dev.resetDevice(true);
                owner = false;
            }
            case VhostUser.RESET_DEVICE -> {
                expect(m, 0, 0);
                dev.resetDevice(false);
            }
            case VhostUser.SET_MEM_TABLE -> setMemTable(m);
            case VhostUser.ADD_MEM_REG -> addMemReg(m);
            case VhostUser.REM_MEM_REG -> remMemReg(m);
            case VhostUser.SET_VRING_NUM -> {
                VringState v = vringState(m);
                int r = v.ring;
                int num = v.num;
                // The front-end owns the ring's size (section 2.7: a power of two up to 32768; QEMU allows
                // vhost-user-blk queue-size up to 1024), whatever the
                // disk's in-process queue size is.
                // Section 2.8: a packed ring may have any size from 1 to 32768.
                if (dev.packed() ? !RingFormat.PACKED.isValidSize(num) : !QueueLayout.isValidSize(num)) {
                    throw new Refused("queue " + r + " size " + Integer.toUnsignedString(num)
                            + (dev.packed() ? " is not from 1 to " : " is not a power of two in 1..")
                            + QueueLayout.MAX_SIZE);
                }
                dev.setRingSize(r, num);
            }
            case VhostUser.SET_VRING_BASE -> {
                VringState v = vringState(m);
                int r = v.ring;
                int base = v.num;
                if (!dev.packed() && (base < 0 || base > 0xffff)) {
                    throw new Refused("queue " + r + " base " + Integer.toUnsignedString(base)
                            + " is not a 16-bit ring index");
                }
                // Packed: two positions with their wrap counters (bits 0-15 available, 16-31 used); the device
                // view refuses a position outside the ring when the queue starts.
                dev.setRingBase(r, base);
            }
            case VhostUser.SET_VRING_ADDR -> setVringAddr(m);
            case VhostUser.SET_VRING_KICK -> setVringKick(m);
            case VhostUser.SET_VRING_CALL -> {
                FdArg a = fdArg(m);
                dev.setCall(a.ring, a.fd);
            }
            case VhostUser.SET_VRING_ERR -> {
                FdArg a = fdArg(m);
                dev.setErr(a.ring, a.fd);
            }
            case VhostUser.SET_VRING_ENABLE -> {
                VringState v = vringState(m);
                int r = v.ring;
                int enable = v.num;
                if (enable != 0 && enable != 1) {
                    throw new Refused("queue " + r + " enable value " + enable + " is neither 0 nor 1");
                }
                dev.setEnabled(r, enable == 1);
            }
            case VhostUser.SET_CONFIG -> setConfig(m);
            case VhostUser.SET_INFLIGHT_FD -> setInflightFd(m);
            case VhostUser.SET_LOG_FD -> {
                // vhost-user.rst: an eventfd the back-end may signal after updating the log; QEMU does not use it
                // with LOG_SHMFD (it polls the bitmap). Accepted and closed.
                expect(m, 0, 1);
                Fds.closeAll(m.fds());
            }
            case VhostUser.SET_BACKEND_REQ_FD -> {
                expect(m, 0, 1);
                dev.setBackendChannel(m.fds()[0], replyAck());
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

    /** Refuses a request whose protocol feature ({@link Gate}) was not negotiated. */
    private void requireProtocol(int request) throws Refused {
        Gate gate = Gate.of(request);
        if (gate != null && (protocolFeatures & gate.bit) == 0) {
            throw new Refused("protocol feature " + gate + " was not negotiated");
        }
    }

    /**
     * The protocol features that gate requests (docs/interop/vhost-user.rst names, for each request, the feature
     * that must be negotiated before it is sent), named as a refusal names them. One table, checked before any
     * other check of the message.
     */
    private enum Gate {
        MQ(VhostUser.PROTOCOL_F_MQ),
        CONFIG(VhostUser.PROTOCOL_F_CONFIG),
        CONFIGURE_MEM_SLOTS(VhostUser.PROTOCOL_F_CONFIGURE_MEM_SLOTS),
        RESET_DEVICE(VhostUser.PROTOCOL_F_RESET_DEVICE),
        INFLIGHT_SHMFD(VhostUser.PROTOCOL_F_INFLIGHT_SHMFD),
        BACKEND_REQ(VhostUser.PROTOCOL_F_BACKEND_REQ),
        LOG_SHMFD(VhostUser.PROTOCOL_F_LOG_SHMFD);

        final long bit;

        Gate(long bit) {
            this.bit = bit;
        }

        /** The feature {@code request} needs, or {@code null} when it needs none. */
        static Gate of(int request) {
            return switch (request) {
                case VhostUser.GET_QUEUE_NUM -> MQ;
                case VhostUser.GET_CONFIG, VhostUser.SET_CONFIG -> CONFIG;
                case VhostUser.GET_MAX_MEM_SLOTS, VhostUser.ADD_MEM_REG, VhostUser.REM_MEM_REG -> CONFIGURE_MEM_SLOTS;
                case VhostUser.RESET_DEVICE -> RESET_DEVICE;
                case VhostUser.GET_INFLIGHT_FD, VhostUser.SET_INFLIGHT_FD -> INFLIGHT_SHMFD;
                case VhostUser.SET_BACKEND_REQ_FD -> BACKEND_REQ;
                case VhostUser.SET_LOG_BASE -> LOG_SHMFD;
                default -> null;
            };
        }
    }

    /** A checked queue index. */
    private int ring(int index) throws Refused {
        if (index < 0 || index >= dev.queueCount()) {
            throw new Refused("queue index " + Integer.toUnsignedString(index) + " is out of range (the device has "
                    + dev.queueCount() + " queues)");
        }
        return index;
    }

    // Features.

    private void setFeatures(long f) throws Refused {
        long offered = offeredFeatures();
        if ((f & ~offered) != 0) {
            throw new Refused(String.format("features 0x%x were not offered (offered 0x%x)", f & ~offered, offered));
        }
        dev.setFeatures(f);
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
        List<MemoryTable.Region> table = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            table.add(checkedRegion(b, table, "region " + i + ": "));
        }
        dev.replaceMemory(table, m.fds());
    }

    private void addMemReg(Message m) throws Refused {
        expect(m, 8 + VhostUser.REGION_SIZE, 1);
        ByteBuffer b = m.body();
        b.getLong(); // padding
        MemoryTable.Region r = checkedRegion(b, dev.regions(), "");
        if (dev.regions().size() >= MAX_MEM_SLOTS) {
            throw new Refused("all " + MAX_MEM_SLOTS + " memory slots are in use");
        }
        dev.addRegion(m.fds()[0], r);
    }

    /**
     * Reads one VhostUserMemoryRegion (u64 guest address, size, user address, mmap offset), the one layout
     * SET_MEM_TABLE and ADD_MEM_REG share, and checks it: its shape, then that it overlaps none of {@code others}.
     * Returns it not mapped yet (no chunks); a refusal starts with {@code where}.
     */
    private static MemoryTable.Region checkedRegion(ByteBuffer b, List<MemoryTable.Region> others, String where)
            throws Refused {
        long gpa = b.getLong();
        long size = b.getLong();
        long uva = b.getLong();
        long off = b.getLong();
        String bad = MemoryTable.checkShape(gpa, size, uva, off);
        if (bad == null) {
            bad = MemoryTable.overlap(others, gpa, size, uva);
        }
        if (bad != null) {
            throw new Refused(where + bad);
        }
        return new MemoryTable.Region(gpa, size, uva, off, List.of());
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
        dev.removeRegion(gpa, size, uva);
    }

    // Rings.

    private void setVringAddr(Message m) throws Refused {
        expect(m, 40, 0);
        ByteBuffer b = m.body();
        int r = ring(b.getInt());
        int flags = b.getInt();
        long desc = b.getLong();
        long used = b.getLong();
        long avail = b.getLong();
        long logGuestAddr = b.getLong();
        if ((flags & ~VhostUser.VRING_F_LOG) != 0) {
            throw new Refused("queue " + r + " address flags 0x" + Integer.toHexString(flags) + " unknown");
        }
        dev.setRingAddresses(r, desc, used, avail, (flags & VhostUser.VRING_F_LOG) != 0, logGuestAddr);
    }

    /** The queue index and descriptor of SET_VRING_KICK / CALL / ERR; a null fd means NOFD. */
    private record FdArg(int ring, FileDescriptor fd) {
    }

    /** A vring state payload (u32 index, u32 num): SET_VRING_NUM, SET_VRING_BASE, GET_VRING_BASE, SET_VRING_ENABLE. */
    private record VringState(int ring, int num) {
    }

    /** The vring state of {@code m}, its index checked; {@code num} is for the request to check. */
    private VringState vringState(Message m) throws Refused {
        expect(m, 8, 0);
        ByteBuffer b = m.body();
        return new VringState(ring(b.getInt()), b.getInt());
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
        int r = ring((int) (v & VhostUser.VRING_IDX_MASK));
        return new FdArg(r, noFd ? null : m.fds()[0]);
    }

    private void setVringKick(Message m) throws Refused {
        FdArg a = fdArg(m);
        if (a.fd == null) {
            throw new Refused("queue " + a.ring + ": kick without a descriptor (ring polling) is not supported");
        }
        dev.setKick(a.ring, a.fd);
    }

    // Dirty logging (vhost-user.rst "Migration"; payload VhostUserLog: u64 mmap_size, u64 mmap_offset).

    /**
     * SET_LOG_BASE: maps the bitmap the front-end passes (LOG_SHMFD: a memfd as ancillary data) and answers with a
     * u64 payload, as vhost-user.rst asks ("the back-end must reply ... with a u64 payload"); QEMU waits for it
     * before it syncs and frees the previous bitmap.
     */
    private byte[] setLogBase(Message m) throws Refused {
        expect(m, VhostUser.LOG_PAYLOAD_SIZE, 1);
        ByteBuffer b = m.body();
        long size = b.getLong();
        long offset = b.getLong();
        // The bitmap is an array of u64 (QEMU's vhost_log_chunk_t) marked with 64-bit atomic ORs: whole, aligned
        // words, and a mapping a ByteBuffer can hold.
        if (size <= 0 || size % 8 != 0 || size > Integer.MAX_VALUE - 7 || offset < 0 || offset % 8 != 0
                || offset + size < 0) {
            throw new Refused(String.format("log of 0x%x bytes at offset 0x%x: the size must be a positive multiple"
                    + " of 8 below 2 GiB and the offset a multiple of 8", size, offset));
        }
        DirtyLog.Bitmap bitmap;
        try {
            bitmap = DirtyLog.map(m.fds()[0], size, offset);
        } catch (IOException e) {
            throw new Refused("cannot map the log: " + e.getMessage(), e);
        }
        dev.setLogBase(bitmap);
        return Message.u64(0);
    }

    // Inflight I/O tracking (vhost-user.rst "Inflight I/O tracking"; payload VhostUserInflight:
    // u64 mmap_size, u64 mmap_offset, u16 num_queues, u16 queue_size, padded to 24 bytes).

    private static final int INFLIGHT_PAYLOAD = 24;

    /** num_queues and queue_size of a GET/SET_INFLIGHT_FD payload, checked. */
    private int[] inflightShape(ByteBuffer b) throws Refused {
        int numQueues = b.getShort(16) & 0xffff;
        int queueSize = b.getShort(18) & 0xffff;
        if (numQueues < 1 || numQueues > dev.queueCount()) {
            throw new Refused("inflight area for " + numQueues + " queues; the device has " + dev.queueCount());
        }
        if (dev.packed() ? !RingFormat.PACKED.isValidSize(queueSize) : !QueueLayout.isValidSize(queueSize)) {
            throw new Refused("inflight queue size " + queueSize + (dev.packed() ? " is not from 1 to "
                    : " is not a power of two in 1..") + QueueLayout.MAX_SIZE);
        }
        return new int[] {numQueues, queueSize};
    }

    private byte[] getInflightFd(Message m) throws Refused {
        expect(m, INFLIGHT_PAYLOAD, 0);
        int[] shape = inflightShape(m.body());
        try {
            // Sized for the ring format the acked features select (the packed queue region is larger).
            replyArea = InflightRegion.create(shape[0], shape[1], dev.packed());
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
        boolean packedArea = dev.packed();
        long want = InflightRegion.totalBytes(shape[0], shape[1], packedArea);
        if (mmapSize != want && mmapSize == InflightRegion.totalBytes(shape[0], shape[1], !packedArea)) {
            // An area made while the other ring format was acked (a front-end that kept it across a change of
            // features): taken in its own layout; queues of the other format then run without tracking.
            packedArea = !packedArea;
            want = mmapSize;
        }
        if (mmapSize != want || offset < 0 || offset + mmapSize < 0) {
            throw new Refused(String.format("inflight area of 0x%x bytes at offset 0x%x; %d queues of %d need 0x%x",
                    mmapSize, offset, shape[0], shape[1], want));
        }
        InflightRegion region;
        try {
            region = InflightRegion.map(m.fds()[0], mmapSize, offset, shape[0], shape[1], packedArea);
        } catch (IOException e) {
            throw new Refused("cannot map the inflight area: " + e.getMessage(), e);
        }
        dev.setInflight(region);
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
            out.put((byte) dev.readConfigByte(offset + i));
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
            dev.writeConfigByte(offset + i, b.get() & 0xff);
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

    /** Ends the session: the device side stops and closes every descriptor. */
    @Override
    public void close() {
        dev.close();
    }

    /** A snapshot for the shell. */
    public SessionStatus status() {
        return dev.status(owner, protocolFeatures, messages.get(), refusals.get(), lastRefusal);
    }
}
