package io.kickplug.vhost.frontend;

import io.kickplug.api.blk.VirtioBlk;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.api.memory.MemoryRegion;
import io.kickplug.api.virtio.BufferSpec;
import io.kickplug.api.virtio.DriverQueue;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.api.virtio.RingFormat;
import io.kickplug.api.virtio.UsedBuffer;
import io.kickplug.api.virtio.VirtioFeatures;
import io.kickplug.api.virtio.VirtqueueFactory;
import io.kickplug.vhost.backend.MonitorWait;
import io.kickplug.vhost.backend.Unmapper;
import io.kickplug.vhost.protocol.Message;
import io.kickplug.vhost.protocol.MessageChannel;
import io.kickplug.vhost.protocol.ProtocolException;
import io.kickplug.vhost.protocol.VhostUser;
import java.io.FileDescriptor;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import org.newsclub.net.unix.AFPipe;
import org.newsclub.net.unix.AFUNIXSocket;
import org.newsclub.net.unix.AFUNIXSocketAddress;

/**
 * A vhost-user front-end: it plays QEMU and the Linux driver at once, for the protocol tests and for
 * {@code VhostBench} (the benchmarks module), which drives Kickplug's and qemu-storage-daemon's exports with it. Guest memory is a regular
 * file mapped shared (Java 17 cannot create a memfd; the backend maps any descriptor that /proc/self/fd can
 * reopen). Kick and call descriptors are pipes instead of eventfds (Java cannot create eventfds either): the
 * backend polls the kick pipe's read end and writes 8 bytes to the call pipe's write end, as it would with an
 * eventfd. Rings are laid out with the driver view of the given {@link VirtqueueFactory}.
 *
 * <p>Both ring formats: when the negotiated features hold VIRTIO_F_RING_PACKED (bit 34, offered by a back-end
 * with the packed ring bundle and asked for in {@link #negotiate}'s wanted features) the queues are packed
 * (VIRTIO 1.2 section 2.8). SET_VRING_ADDR then carries the descriptor ring, the driver event suppression area
 * (in the available-ring field) and the device event suppression area (in the used-ring field), as QEMU sends
 * them, and vring bases carry the wrap counter in bit 15 ({@link #initialBase()}: 0x8000 for a fresh ring).
 * The factory must then serve packed rings too ({@code RingSelector.of(split, packed)}).
 */
public class FrontendClient implements AutoCloseable {

    /** Where the client pretends guest memory is mapped in its own address space. */
    public static final long USER_BASE = 0x7f12_0000_0000L;
    public static final long MEMORY_BYTES = 4L << 20;
    /** Guest physical layout: queue q's rings at q * RING_STRIDE, data buffers from DATA_BASE. */
    static final long RING_STRIDE = 64 << 10;
    static final long DATA_BASE = 1L << 20;
    /** Request slot layout: each slot's 64 KiB holds its header at 0, status byte at 16 and data from 512. */
    private static final long SLOT_BYTES = 64 << 10;
    private static final long STATUS_OFFSET = 16;
    private static final long DATA_OFFSET = 512;
    public static final int QUEUE_SIZE = 64;

    private final VirtqueueFactory queueFactory;
    /** Whether each queue with a call descriptor gets a thread that reads it ({@link Queue#awaitInterrupt}). */
    private boolean callReaders = true;
    public AFUNIXSocket socket;
    public MessageChannel channel;
    private final Path memoryFile;
    private final RandomAccessFile memoryRaf;
    /** The client's own mapping of guest memory, unmapped at {@link #close}. */
    private final MappedByteBuffer memoryMap;
    /** Size of guest memory, one region at guest address 0. */
    public final long memoryBytes;
    public final GuestMemory memory;
    private final List<Queue> queues = new ArrayList<>();
    private long features;
    /** False after {@link #negotiate(long, long)} left REPLY_ACK out: {@link #sendAck} then sends plainly. */
    private boolean replyAck = true;

    /** One driver queue with its kick and call pipes. */
    public final class Queue {
        public final int index;
        public DriverQueue driver;
        final AFPipe kick = AFPipe.open();
        AFPipe call = AFPipe.open();
        final Semaphore interrupts = new Semaphore(0);
        /** Ring size and guest-physical base of the rings; -1: at {@code index * RING_STRIDE}. */
        int size = QUEUE_SIZE;
        long base = -1;
        /** Every notification read from the call pipe, whether a waiter consumed it or not. */
        private int received;
        Thread callReader;

        Queue(int index) throws IOException {
            this.index = index;
        }

        long ringBase() {
            return base >= 0 ? base : index * RING_STRIDE;
        }

        void startCallReader() {
            AFPipe pipe = call;
            callReader = new Thread(() -> {
                ByteBuffer b = ByteBuffer.allocate(8);
                try {
                    while (true) {
                        b.clear();
                        if (pipe.source().read(b) < 0) {
                            return;
                        }
                        interrupts.release();
                        synchronized (this) {
                            received++;
                            notifyAll();
                        }
                    }
                } catch (IOException e) {
                    // pipe closed
                } finally {
                    try {
                        pipe.source().close(); // a replaced pipe's read end goes with its reader
                    } catch (IOException e) {
                        // closing a read end: nothing to report
                    }
                }
            }, "test-call-reader-" + index);
            callReader.setDaemon(true);
            callReader.start();
        }

        /** The call pipe's read end, for a caller that reads notifications itself ({@link #callReaders}). */
        public AFPipe.SourceChannel callSource() {
            return call.source();
        }

        public void kick() throws IOException {
            ByteBuffer one = ByteBuffer.allocate(8).order(ByteOrder.nativeOrder()).putLong(1).flip();
            kick.sink().write(one);
        }

        /** Waits for a used-buffer notification (the backend wrote the call pipe). */
        public boolean awaitInterrupt(long timeout, TimeUnit unit) throws InterruptedException {
            return interrupts.tryAcquire(timeout, unit);
        }

        /** Waits until {@code n} notifications in all arrived on the call pipe. */
        public synchronized boolean awaitReceived(int n, long timeoutMillis) throws InterruptedException {
            return MonitorWait.await(this, () -> received >= n, timeoutMillis, TimeUnit.MILLISECONDS);
        }

        public synchronized int received() {
            return received;
        }

        public int interruptsPending() {
            return interrupts.availablePermits();
        }
    }

    /**
     * A client whose guest memory is {@code memoryBytes} (at least {@link #MEMORY_BYTES}, a multiple of 4 KiB)
     * in {@code memoryFile}, which is deleted at {@link #close}. A file in /dev/shm behaves like QEMU's memfd.
     */
    public FrontendClient(Path socketPath, Path memoryFile, long memoryBytes, VirtqueueFactory queueFactory,
            GuestMemoryFactory memoryFactory) throws IOException {
        if (memoryBytes < MEMORY_BYTES || memoryBytes > Integer.MAX_VALUE || memoryBytes % 4096 != 0) {
            throw new IllegalArgumentException("guest memory of " + memoryBytes + " bytes");
        }
        this.queueFactory = queueFactory;
        this.memoryFile = memoryFile;
        this.memoryBytes = memoryBytes;
        Files.deleteIfExists(memoryFile);
        this.memoryRaf = new RandomAccessFile(memoryFile.toFile(), "rw");
        memoryRaf.setLength(memoryBytes);
        this.memoryMap = memoryRaf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, memoryBytes);
        this.memory = memoryFactory.wrap(List.of(new MemoryRegion(0, memoryBytes)),
                List.of(List.of(memoryMap)));
        connect(socketPath);
    }

    private void connect(Path socketPath) throws IOException {
        this.socket = AFUNIXSocket.newInstance();
        socket.connect(AFUNIXSocketAddress.of(socketPath.toFile()));
        socket.setSoTimeout(10_000);
        this.channel = new MessageChannel(socket);
    }

    /**
     * Drops the connection, keeping guest memory and the driver queues as they are: what QEMU does when its
     * back-end goes away. {@link #reconnect} connects again; the caller then negotiates again and restarts the
     * queues with {@link #restartQueue}.
     */
    public void disconnect() throws IOException {
        socket.close();
    }

    /** Connects again after {@link #disconnect}. */
    public void reconnect(Path socketPath) throws IOException {
        connect(socketPath);
    }

    /** The memory file's descriptor, to pass as a region. */
    public FileDescriptor memoryFd() throws IOException {
        return memoryRaf.getFD();
    }

    // Raw protocol.

    public void send(int request, int flags, byte[] payload, FileDescriptor... fds) throws IOException {
        channel.send(request, VhostUser.VERSION | flags, payload, fds);
    }

    public Message receive() throws IOException {
        try {
            Message m = channel.read();
            if (m == null) {
                throw new IOException("backend closed the connection");
            }
            return m;
        } catch (ProtocolException e) {
            throw new IOException(e);
        }
    }

    /** Sends with NEED_REPLY and returns the REPLY_ACK status (0: success). */
    public long sendAck(int request, byte[] payload, FileDescriptor... fds) throws IOException {
        if (!replyAck) {
            // Nothing answers: a request that needs a reply anyway (GET_*) orders what follows.
            send(request, 0, payload, fds);
            return 0;
        }
        send(request, VhostUser.FLAG_NEED_REPLY, payload, fds);
        Message r = receive();
        if (r.request() != request || r.size() != 8) {
            throw new IOException("unexpected reply " + r.name() + " of " + r.size() + " bytes to "
                    + VhostUser.name(request));
        }
        return r.body().getLong();
    }

    /** Sends a request that always answers and returns the reply. */
    public Message call(int request, byte[] payload) throws IOException {
        send(request, 0, payload);
        Message r = receive();
        if (r.request() != request) {
            throw new IOException("reply to " + r.name() + " while waiting for " + VhostUser.name(request));
        }
        return r;
    }

    public long getU64(int request) throws IOException {
        Message r = call(request, new byte[0]);
        return r.body().getLong();
    }

    public static byte[] region(long gpa, long size, long uva, long offset) {
        return Message.payload(40).putLong(0).putLong(gpa).putLong(size).putLong(uva).putLong(offset).array();
    }

    public static byte[] vringAddr(int index, long desc, long used, long avail) {
        return vringAddr(index, desc, used, avail, 0, 0);
    }

    /** SET_VRING_ADDR's payload with {@code flags} (VHOST_VRING_F_LOG) and {@code logGuestAddr}. */
    public static byte[] vringAddr(int index, long desc, long used, long avail, int flags, long logGuestAddr) {
        return Message.payload(40).putInt(index).putInt(flags).putLong(desc).putLong(used).putLong(avail)
                .putLong(logGuestAddr).array();
    }

    // Dirty logging (vhost-user.rst "Migration"), as QEMU 7.2's vhost_migration_log sends it.

    /** The dirty log this front-end gave the back-end, or {@code null}. */
    private MappedByteBuffer logMap;
    private RandomAccessFile logRaf;
    private Path logFile;
    private static final java.lang.invoke.VarHandle LOG_WORD = java.lang.invoke.MethodHandles
            .byteBufferViewVarHandle(long[].class, java.nio.ByteOrder.LITTLE_ENDIAN);

    /**
     * Gives the back-end a fresh dirty log in {@code file} (one bit per 4 KiB page of guest memory, rounded up to
     * whole u64 words) with SET_LOG_BASE and waits for its u64 reply; a log given before is replaced (its file
     * stays until {@link #close}). Returns the reply's value.
     */
    public long setLogBase(Path file) throws IOException {
        long pages = (memoryBytes + 4095) / 4096;
        long size = (pages + 63) / 64 * 8;
        RandomAccessFile raf = new RandomAccessFile(file.toFile(), "rw");
        raf.setLength(size);
        MappedByteBuffer map = raf.getChannel().map(FileChannel.MapMode.READ_WRITE, 0, size);
        send(VhostUser.SET_LOG_BASE, 0, Message.payload(16).putLong(size).putLong(0).array(), raf.getFD());
        Message r = receive();
        if (r.request() != VhostUser.SET_LOG_BASE || r.size() != 8) {
            raf.close();
            throw new IOException("SET_LOG_BASE answered with " + r.name() + " of " + r.size() + " bytes");
        }
        RandomAccessFile oldRaf = logRaf;
        Path oldFile = logFile;
        logRaf = raf;
        logMap = map;
        logFile = file;
        if (oldRaf != null) {
            oldRaf.close();
            Files.deleteIfExists(oldFile);
        }
        return r.body().getLong();
    }

    /**
     * Turns dirty logging on or off like QEMU's vhost_dev_set_log: SET_FEATURES with or without VHOST_F_LOG_ALL,
     * then SET_VRING_ADDR of every started queue with or without VHOST_VRING_F_LOG and log_guest_addr = the used
     * ring's guest physical address.
     */
    public void setLogging(boolean on) throws IOException {
        long f = on ? features | VhostUser.F_LOG_ALL : features & ~VhostUser.F_LOG_ALL;
        check(sendAck(VhostUser.SET_FEATURES, Message.u64(f)), "SET_FEATURES");
        for (Queue q : queues) {
            QueueLayout layout = layoutOf(q);
            check(sendAck(VhostUser.SET_VRING_ADDR, vringAddr(q.index, USER_BASE + layout.descTable(),
                    USER_BASE + layout.usedRing(), USER_BASE + layout.availRing(), on ? VhostUser.VRING_F_LOG : 0,
                    on ? layout.usedRing() : 0)), "SET_VRING_ADDR");
        }
    }

    /**
     * Collects and clears the dirty log as QEMU does (an atomic exchange of each 64-bit word with 0,
     * vhost_dev_sync_region): the marked pages (guest physical address / 4096), ascending.
     */
    public java.util.SortedSet<Long> takeDirtyPages() {
        return dirtyPages(true);
    }

    /** The pages marked in the dirty log now, ascending, without clearing them (a front-end that did not collect). */
    public java.util.SortedSet<Long> peekDirtyPages() {
        return dirtyPages(false);
    }

    private java.util.SortedSet<Long> dirtyPages(boolean clear) {
        java.util.SortedSet<Long> pages = new java.util.TreeSet<>();
        for (int w = 0; w < logMap.capacity() / 8; w++) {
            long bits = clear ? (long) LOG_WORD.getAndSet(logMap, w * 8, 0L) : (long) LOG_WORD.getVolatile(logMap, w * 8);
            while (bits != 0) {
                int b = Long.numberOfTrailingZeros(bits);
                pages.add(w * 64L + b);
                bits &= bits - 1;
            }
        }
        return pages;
    }

    // A whole front-end.

    /**
     * Negotiates like QEMU 7.2: features (device's minus MQ-independent extras as given), protocol features
     * (REPLY_ACK, MQ, CONFIG, CONFIGURE_MEM_SLOTS, RESET_DEVICE as offered), owner, memory with ADD_MEM_REG.
     */
    public void negotiate(long wantFeatures) throws IOException {
        negotiate(wantFeatures, -1L);
    }

    /** {@link #negotiate(long)} acking only the offered protocol features that are also in {@code protocolMask}. */
    public void negotiate(long wantFeatures, long protocolMask) throws IOException {
        long offered = getU64(VhostUser.GET_FEATURES);
        long protocol = getU64(VhostUser.GET_PROTOCOL_FEATURES) & protocolMask;
        send(VhostUser.SET_PROTOCOL_FEATURES, 0, Message.u64(protocol));
        replyAck = (protocol & VhostUser.PROTOCOL_F_REPLY_ACK) != 0;
        check(sendAck(VhostUser.SET_OWNER, new byte[0]), "SET_OWNER");
        features = offered & (wantFeatures | VhostUser.F_PROTOCOL_FEATURES | VirtioFeatures.VERSION_1);
        check(sendAck(VhostUser.SET_FEATURES, Message.u64(features)), "SET_FEATURES");
        if ((protocol & VhostUser.PROTOCOL_F_CONFIGURE_MEM_SLOTS) != 0) {
            check(sendAck(VhostUser.ADD_MEM_REG, region(0, memoryBytes, USER_BASE, 0), memoryFd()), "ADD_MEM_REG");
        } else {
            // One region in a table: u32 count, u32 padding, then the region without ADD_MEM_REG's padding word.
            byte[] table = Message.payload(8 + 32).putInt(1).putInt(0).putLong(0).putLong(memoryBytes)
                    .putLong(USER_BASE).putLong(0).array();
            check(sendAck(VhostUser.SET_MEM_TABLE, table, memoryFd()), "SET_MEM_TABLE");
        }
    }

    /** Whether queues started from now on get a call-reading thread (default); off, the caller reads them. */
    public void callReaders(boolean on) {
        this.callReaders = on;
    }

    /**
     * The driver view of a queue, resuming at available index {@code base} (packed: position and wrap counter
     * in bit 15; the fresh ring is {@link RingFormat#initialIndex()}).
     */
    protected DriverQueue newDriverQueue(GuestMemory guestMemory, QueueLayout layout, long driverFeatures, int base) {
        if (base != RingFormat.of(driverFeatures).initialIndex()) {
            throw new UnsupportedOperationException("resuming a driver queue needs a driver view that can resume");
        }
        return queueFactory.createDriverQueue(guestMemory, layout, driverFeatures, -1, 0);
    }

    /** The ring format the negotiated features select: packed when VIRTIO_F_RING_PACKED was acked. */
    public RingFormat ringFormat() {
        return RingFormat.of(features);
    }

    /** The features acked by the last {@link #negotiate}. */
    public long features() {
        return features;
    }

    /**
     * The vring base of a fresh ring in the negotiated format: 0 for split, 0x8000 for packed (position 0 with
     * wrap counter 1 in bit 15, section 2.8.1), what QEMU sends with SET_VRING_BASE for a new ring.
     */
    public int initialBase() {
        return ringFormat().initialIndex();
    }

    /** Queue {@code q}'s layout in the negotiated format (packed: ring, driver and device event areas). */
    private QueueLayout layoutOf(Queue q) {
        return ringFormat().layout(q.size, q.ringBase());
    }

    /** Sets up and starts queue {@code index} like QEMU: NUM, BASE, ADDR, KICK, CALL (or NOFD), ENABLE. */
    public Queue startQueue(int index, int base, boolean noCallFd) throws IOException {
        return startQueue(index, base, noCallFd, QUEUE_SIZE, -1);
    }

    /** {@link #startQueue(int, int, boolean)} with a ring of {@code size} entries at guest address {@code ringBase}. */
    public Queue startQueue(int index, int base, boolean noCallFd, int size, long ringBase) throws IOException {
        Queue q = queues.stream().filter(x -> x.index == index).findFirst().orElse(null);
        if (q == null) {
            q = new Queue(index);
            queues.add(q);
        }
        q.size = size;
        q.base = ringBase;
        QueueLayout layout = layoutOf(q);
        q.driver = newDriverQueue(memory, layout, features, base);
        return restartQueue(index, base, noCallFd);
    }

    /** Sends queue {@code index}'s setup again (NUM, BASE, ADDR, KICK, CALL, ENABLE), keeping its driver state. */
    public Queue restartQueue(int index, int base, boolean noCallFd) throws IOException {
        return restartQueue(index, base, noCallFd, true);
    }

    /**
     * {@link #restartQueue(int, int, boolean)}, leaving out SET_VRING_ENABLE when {@code enable} is false: QEMU's
     * vhost_dev_start sets the rings up, then the log base, then enables them ({@link #enableQueue}).
     */
    public Queue restartQueue(int index, int base, boolean noCallFd, boolean enable) throws IOException {
        Queue q = queue(index);
        QueueLayout layout = layoutOf(q);
        check(sendAck(VhostUser.SET_VRING_NUM, Message.vringState(index, q.size)), "SET_VRING_NUM");
        check(sendAck(VhostUser.SET_VRING_BASE, Message.vringState(index, base)), "SET_VRING_BASE");
        check(sendAck(VhostUser.SET_VRING_ADDR, vringAddr(index, USER_BASE + layout.descTable(),
                USER_BASE + layout.usedRing(), USER_BASE + layout.availRing())), "SET_VRING_ADDR");
        check(sendAck(VhostUser.SET_VRING_KICK, Message.u64(index), q.kick.source().getFileDescriptor()),
                "SET_VRING_KICK");
        if (noCallFd) {
            check(sendAck(VhostUser.SET_VRING_CALL, Message.u64(index | VhostUser.VRING_NOFD_MASK)), "SET_VRING_CALL");
        } else {
            if (q.callReader != null) {
                replaceCall(q);
            }
            check(sendAck(VhostUser.SET_VRING_CALL, Message.u64(index), q.call.sink().getFileDescriptor()),
                    "SET_VRING_CALL");
            if (callReaders) {
                q.startCallReader();
            }
        }
        if (enable) {
            enableQueue(index, true);
        }
        return q;
    }

    /** SET_VRING_ENABLE of queue {@code index}. */
    public void enableQueue(int index, boolean on) throws IOException {
        check(sendAck(VhostUser.SET_VRING_ENABLE, Message.vringState(index, on ? 1 : 0)), "SET_VRING_ENABLE");
    }

    /**
     * Starts queue {@code index} as QEMU 7.2 starts a vhost-user-blk ring: NUM, BASE 0, ADDR, KICK and ENABLE,
     * leaving the call descriptor as it was (QEMU's masked notifier, set when it connected:
     * vhost_virtqueue_init). {@link #unmask} then sends the guest's notifier, as vhost_user_blk_start does
     * after vhost_dev_start.
     */
    public Queue startQueueMasked(int index) throws IOException {
        Queue q = queues.stream().filter(x -> x.index == index).findFirst().orElse(null);
        if (q == null) {
            q = new Queue(index);
            queues.add(q);
        }
        QueueLayout layout = layoutOf(q);
        q.driver = newDriverQueue(memory, layout, features, initialBase());
        check(sendAck(VhostUser.SET_VRING_NUM, Message.vringState(index, q.size)), "SET_VRING_NUM");
        check(sendAck(VhostUser.SET_VRING_BASE, Message.vringState(index, initialBase())), "SET_VRING_BASE");
        check(sendAck(VhostUser.SET_VRING_ADDR, vringAddr(index, USER_BASE + layout.descTable(),
                USER_BASE + layout.usedRing(), USER_BASE + layout.availRing())), "SET_VRING_ADDR");
        check(sendAck(VhostUser.SET_VRING_KICK, Message.u64(index), q.kick.source().getFileDescriptor()),
                "SET_VRING_KICK");
        check(sendAck(VhostUser.SET_VRING_ENABLE, Message.vringState(index, 1)), "SET_VRING_ENABLE");
        return q;
    }

    /**
     * A new call pipe for {@code q}. The old pipe's write end is closed here: its reader reads what the back-end
     * still sends on its own copy and ends (closing the read end) once the back-end drops that copy, instead of
     * waiting for ever on a pipe this client still held open.
     */
    private static void replaceCall(Queue q) throws IOException {
        q.call.sink().close();
        q.call = AFPipe.open();
    }

    /** SET_VRING_CALL with queue {@code q}'s own call pipe, whose notifications {@link Queue#received} counts. */
    public void unmask(Queue q) throws IOException {
        if (q.callReader != null) {
            replaceCall(q);
        }
        check(sendAck(VhostUser.SET_VRING_CALL, Message.u64(q.index), q.call.sink().getFileDescriptor()),
                "SET_VRING_CALL");
        q.startCallReader();
    }

    /**
     * GET_VRING_BASE: stops the ring, returns its next available index. Packed (vhost-user.rst): bits 0-14 the
     * next available position, bit 15 its wrap counter, bits 16-30 the next used position, bit 31 its wrap
     * counter; {@link #restartQueue} sends it back as it is.
     */
    public int stopQueue(int index) throws IOException {
        Message r = call(VhostUser.GET_VRING_BASE, Message.vringState(index, 0));
        ByteBuffer b = r.body();
        if (r.size() != 8 || b.getInt() != index) {
            throw new IOException("bad GET_VRING_BASE reply of " + r.size() + " bytes");
        }
        return b.getInt();
    }

    /**
     * Queue {@code index}'s ring layout in guest memory, in the negotiated format: the size and place it was started
     * with ({@link #startQueue(int, int, boolean, int, long)}), or {@link #QUEUE_SIZE} entries at
     * {@code index * RING_STRIDE} for a queue not started yet. (It always gave the latter, so a caller that wrote
     * {@code used_event} of a 256-entry queue through it wrote into the available ring instead.)
     */
    public QueueLayout layout(int index) {
        return queues.stream().filter(x -> x.index == index).findFirst().map(this::layoutOf)
                .orElseGet(() -> ringFormat().layout(QUEUE_SIZE, index * RING_STRIDE));
    }

    public Queue queue(int index) {
        return queues.stream().filter(x -> x.index == index).findFirst().orElseThrow();
    }

    private static void check(long status, String what) throws IOException {
        if (status != 0) {
            throw new IOException(what + " was refused (status " + status + ")");
        }
    }

    // virtio-blk requests.

    /**
     * Adds one virtio-blk request (header, data, status) to queue {@code q} and kicks. Data lives at
     * {@code DATA_BASE + slot * 64 KiB}.
     */
    public void submit(Queue q, int slot, int type, long sector, int dataBytes) throws IOException {
        submitNoKick(q, slot, type, sector, dataBytes);
        if (q.driver.kickPrepare()) {
            q.kick();
        }
    }

    /** Adds one request like {@link #submit} without the kick decision: the caller batches them. */
    public void submitNoKick(Queue q, int slot, int type, long sector, int dataBytes) throws IOException {
        submitPrepared(q, slot, chain(slot, type, dataBytes), type, sector);
    }

    /**
     * The descriptor chain of request slot {@code slot}: header, data (if any) and status buffer at the slot's
     * fixed addresses. A caller that submits the same kind of request from a slot again and again builds it
     * once and passes it to {@link #submitPrepared} (a benchmark front-end: no chain allocated per request).
     */
    public List<BufferSpec> chain(int slot, int type, int dataBytes) {
        BufferSpec header = BufferSpec.readable(slotBase(slot), VirtioBlk.HEADER_SIZE);
        BufferSpec status = BufferSpec.writable(slotBase(slot) + STATUS_OFFSET, 1);
        if (dataBytes == 0) {
            return List.of(header, status);
        }
        long data = dataAddress(slot);
        return List.of(header, type == VirtioBlk.T_IN ? BufferSpec.writable(data, dataBytes)
                : BufferSpec.readable(data, dataBytes), status);
    }

    /**
     * Writes the request header (type, sector) and a status byte the device must overwrite into slot
     * {@code slot}, then adds {@code chain} (built by {@link #chain} for the same slot and type) with the slot
     * number as its token; no kick decision.
     */
    public void submitPrepared(Queue q, int slot, List<BufferSpec> chain, int type, long sector) throws IOException {
        long base = slotBase(slot);
        memory.writeU32(base, type);
        memory.writeU32(base + 4, 0);
        memory.writeU64(base + 8, sector);
        memory.writeU8(base + STATUS_OFFSET, (byte) 0xff);
        if (!q.driver.add(chain, false, slot)) {
            throw new IOException("queue " + q.index + " is full");
        }
    }

    public long dataAddress(int slot) {
        return slotBase(slot) + DATA_OFFSET;
    }

    public int status(int slot) {
        return memory.readU8(slotBase(slot) + STATUS_OFFSET) & 0xff;
    }

    private static long slotBase(int slot) {
        return DATA_BASE + slot * SLOT_BYTES;
    }

    /** Waits until queue {@code q} returns a used buffer, with interrupts or by polling the used ring. */
    public UsedBuffer awaitUsed(Queue q, boolean byInterrupt, long timeoutMillis) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (System.nanoTime() < deadline) {
            UsedBuffer u = q.driver.getUsed();
            if (u != null) {
                return u;
            }
            if (byInterrupt) {
                q.awaitInterrupt(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())),
                        TimeUnit.MILLISECONDS);
            } else {
                Thread.onSpinWait(); // a poll queue: the driver polls the used ring (no interrupt comes)
            }
        }
        throw new AssertionError("no used buffer on queue " + q.index + " within " + timeoutMillis + " ms");
    }

    /** Writes {@code pattern} to sector {@code sector} and reads it back through queue {@code q}. */
    public void writeReadVerify(Queue q, long sector, byte pattern, boolean byInterrupt) throws Exception {
        byte[] data = new byte[4096];
        java.util.Arrays.fill(data, pattern);
        memory.write(dataAddress(0), data, 0, data.length);
        submit(q, 0, VirtioBlk.T_OUT, sector, data.length);
        awaitUsed(q, byInterrupt, 10_000);
        if (status(0) != VirtioBlk.S_OK) {
            throw new AssertionError("write status " + status(0));
        }
        memory.fill(dataAddress(1), data.length, (byte) 0);
        submit(q, 1, VirtioBlk.T_IN, sector, data.length);
        awaitUsed(q, byInterrupt, 10_000);
        if (status(1) != VirtioBlk.S_OK) {
            throw new AssertionError("read status " + status(1));
        }
        byte[] back = new byte[data.length];
        memory.read(dataAddress(1), back, 0, back.length);
        if (!java.util.Arrays.equals(data, back)) {
            throw new AssertionError("read back differs from what was written at sector " + sector);
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
        for (Queue q : queues) {
            q.kick.close();
            q.call.close();
        }
        memoryRaf.close();
        Files.deleteIfExists(memoryFile);
        if (logRaf != null) {
            logRaf.close();
            Files.deleteIfExists(logFile);
        }
        // Unmapped now rather than by the GC, so that tests can count the back-end's mappings alone. Nothing
        // touches the client's memory after close (its call readers only read pipes).
        Unmapper.unmap(memoryMap);
    }
}
