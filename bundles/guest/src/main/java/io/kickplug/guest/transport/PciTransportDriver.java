package io.kickplug.guest.transport;

import io.kickplug.api.transport.PciFunction;
import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.virtio.QueueLayout;
import io.kickplug.guest.driver.GuestDriverException;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * {@link VirtioTransportDriver} over a virtio-pci modern function (VIRTIO 1.2 section 4.1), after Linux's
 * virtio_pci_modern and virtio_pci_common:
 * <ul>
 * <li>{@link #probe()} (vp_modern_probe): vendor 0x1AF4, device 0x1000-0x107F, then the capability list walked
 * in configuration space for the first usable common, notify, ISR and device structure (bar, offset, length,
 * checked against the BAR), notify_off_multiplier; Memory Space and Bus Master enabled;</li>
 * <li>{@link #findQueues} (vp_find_vqs): MSI-X with the configuration change on vector 0 and queue q on
 * vector q + 1; if the table is too small or the device answers a vector write with NO_VECTOR (0xffff),
 * MSI-X with vector 0 for the configuration and vector 1 shared by the queues; failing that too, INTx. Each
 * vector is written then read back (section 4.1.5.1.2). Queues are enabled after all are set up;</li>
 * <li>{@link #notify(int)} (vp_notify): a 16-bit write of the queue index at the notify structure's offset +
 * queue_notify_off * notify_off_multiplier (section 4.1.4.4), read once per queue at setup;</li>
 * <li>interrupts: with INTx the handler reads the ISR status, which clears it (section 4.1.4.5); with MSI-X the
 * vector is the cause and the ISR is not read.</li>
 * </ul>
 */
public final class PciTransportDriver implements VirtioTransportDriver {
    // Type 0 configuration header (PCI Local Bus 3.0 section 6.1).
    static final int PCI_VENDOR_ID = 0x00;
    static final int PCI_DEVICE_ID = 0x02;
    static final int PCI_COMMAND = 0x04;
    static final int PCI_STATUS = 0x06;
    static final int PCI_SUBSYSTEM_ID = 0x2e;
    static final int PCI_CAPABILITY_LIST = 0x34;
    static final int PCI_COMMAND_MEMORY = 0x0002;
    static final int PCI_COMMAND_MASTER = 0x0004;
    static final int PCI_COMMAND_INTX_DISABLE = 0x0400;
    static final int PCI_STATUS_CAP_LIST = 0x0010;
    static final int PCI_CAP_ID_VNDR = 0x09;
    static final int PCI_CAP_ID_MSIX = 0x11;
    /** Linux's PCI_FIND_CAP_TTL: at most this many capabilities are followed (a loop guard). */
    static final int PCI_FIND_CAP_TTL = 48;
    static final int PCI_STD_HEADER_SIZE = 0x40;
    static final int PCI_CONFIG_HEADER_SIZE = 0x100;
    static final int PCI_STD_NUM_BARS = 6;

    /** Section 4.1.2: the PCI vendor of every virtio device. */
    public static final int VIRTIO_VENDOR = 0x1af4;
    /** Section 4.1.2: 0x1000-0x103f transitional, 0x1040-0x107f modern (0x1040 + device ID). */
    static final int DEVICE_ID_FIRST = 0x1000;
    static final int DEVICE_ID_MODERN = 0x1040;
    static final int DEVICE_ID_LAST = 0x107f;

    // struct virtio_pci_cap (section 4.1.4).
    static final int CAP_LEN = 2;
    static final int CAP_CFG_TYPE = 3;
    static final int CAP_BAR = 4;
    static final int CAP_OFFSET = 8;
    static final int CAP_LENGTH = 12;
    static final int CAP_SIZE = 16;
    static final int NOTIFY_CAP_MULTIPLIER = 16;
    static final int NOTIFY_CAP_SIZE = 20;
    public static final int CFG_TYPE_COMMON = 1;
    public static final int CFG_TYPE_NOTIFY = 2;
    public static final int CFG_TYPE_ISR = 3;
    public static final int CFG_TYPE_DEVICE = 4;

    // struct virtio_pci_common_cfg (section 4.1.4.3).
    public static final int COMMON_DFSELECT = 0x00;
    public static final int COMMON_DF = 0x04;
    public static final int COMMON_GFSELECT = 0x08;
    public static final int COMMON_GF = 0x0c;
    public static final int COMMON_MSIX = 0x10;
    public static final int COMMON_NUMQ = 0x12;
    public static final int COMMON_STATUS = 0x14;
    public static final int COMMON_CFGGENERATION = 0x15;
    public static final int COMMON_Q_SELECT = 0x16;
    public static final int COMMON_Q_SIZE = 0x18;
    public static final int COMMON_Q_MSIX = 0x1a;
    public static final int COMMON_Q_ENABLE = 0x1c;
    public static final int COMMON_Q_NOFF = 0x1e;
    public static final int COMMON_Q_DESCLO = 0x20;
    public static final int COMMON_Q_DESCHI = 0x24;
    public static final int COMMON_Q_AVAILLO = 0x28;
    public static final int COMMON_Q_AVAILHI = 0x2c;
    public static final int COMMON_Q_USEDLO = 0x30;
    public static final int COMMON_Q_USEDHI = 0x34;
    /** sizeof(struct virtio_pci_common_cfg): what the driver needs of the common structure. */
    static final int COMMON_CFG_MIN = 0x38;

    /** Section 4.1.5.1.2: no vector; also the device's answer when it cannot map one. */
    public static final int NO_VECTOR = 0xffff;

    // MSI-X capability and table (PCI Local Bus 3.0 section 6.8.2).
    static final int MSIX_FLAGS = 2;
    static final int MSIX_TABLE = 4;
    static final int MSIX_FLAGS_QSIZE = 0x07ff;
    static final int MSIX_FLAGS_MASKALL = 0x4000;
    static final int MSIX_FLAGS_ENABLE = 0x8000;
    static final int MSIX_BIR = 0x7;
    static final int MSIX_ENTRY_SIZE = 16;
    static final int MSIX_ENTRY_LOWER_ADDR = 0;
    static final int MSIX_ENTRY_UPPER_ADDR = 4;
    static final int MSIX_ENTRY_DATA = 8;
    static final int MSIX_ENTRY_VECTOR_CTRL = 12;
    static final int MSIX_ENTRY_CTRL_MASKBIT = 1;
    /** The x86 MSI address window; each vector's data is its own interrupt vector number from 0x40. */
    static final long MSI_ADDRESS = 0xfee00000L;
    static final int MSI_DATA_BASE = 0x40;

    /** Linux's VP_MSIX_CONFIG_VECTOR and VP_MSIX_VQ_VECTOR. */
    public static final int CONFIG_VECTOR = 0;
    public static final int FIRST_QUEUE_VECTOR = 1;

    /** One mapped virtio structure: its BAR and where in it. */
    record Region(int bar, RegisterWindow window, long offset, long length) {
    }

    private final PciFunction pci;
    private final RegisterWindow cfg;
    private Region common;
    private Region notifyRegion;
    private Region isr;
    private Region device;
    private long notifyMultiplier;
    private int msixCap;
    private int deviceId;
    private boolean probed;
    /** Per queue: offset of its notify address in the notify BAR, -1 when the queue is not set up. */
    private volatile long[] notifyAt = new long[0];
    private volatile InterruptRouting routing;
    private boolean msixEnabled;
    /** Why MSI-X modes were given up by the last {@link #findQueues}; empty when the first mode worked. */
    private List<String> lastRefusals = List.of();

    public PciTransportDriver(PciFunction pci) {
        this.pci = Objects.requireNonNull(pci, "pci");
        this.cfg = Objects.requireNonNull(pci.configSpace(), "configuration space");
    }

    // Probe (vp_modern_probe) --------------------------------------------------------------------------------

    @Override
    public int probe() {
        int vendor = cfg16(PCI_VENDOR_ID);
        int pciDevice = cfg16(PCI_DEVICE_ID);
        if (vendor != VIRTIO_VENDOR) {
            throw new GuestDriverException(String.format("no virtio-pci device: vendor ID is 0x%04x, expected 0x%04x "
                    + "(VIRTIO 1.2 section 4.1.2)", vendor, VIRTIO_VENDOR));
        }
        if (pciDevice < DEVICE_ID_FIRST || pciDevice > DEVICE_ID_LAST) {
            throw new GuestDriverException(String.format("PCI device ID 0x%04x is not a virtio device ID (0x1000 to "
                    + "0x107f, VIRTIO 1.2 section 4.1.2)", pciDevice));
        }
        // Section 4.1.2: a transitional device names its type in the subsystem ID, a modern one in the device ID.
        deviceId = pciDevice < DEVICE_ID_MODERN ? cfg16(PCI_SUBSYSTEM_ID) : pciDevice - DEVICE_ID_MODERN;
        if ((cfg16(PCI_STATUS) & PCI_STATUS_CAP_LIST) == 0) {
            throw new GuestDriverException("virtio-pci device has no capability list, so no virtio structures "
                    + "(VIRTIO 1.2 section 4.1.4)");
        }
        List<Integer> vendorCaps = new ArrayList<>();
        msixCap = 0;
        int ttl = PCI_FIND_CAP_TTL;
        int pos = cfg8(PCI_CAPABILITY_LIST);
        while (ttl-- > 0) {
            // __pci_find_next_cap_ttl: a pointer into the standard header ends the list, as does ID 0xff.
            if (pos < PCI_STD_HEADER_SIZE) {
                break;
            }
            pos &= ~3;
            int id = cfg8(pos);
            if (id == 0xff) {
                break;
            }
            if (id == PCI_CAP_ID_VNDR) {
                vendorCaps.add(pos);
            } else if (id == PCI_CAP_ID_MSIX && msixCap == 0) {
                msixCap = pos;
            }
            pos = cfg8(pos + 1);
        }
        int commonCap = findVirtioCap(vendorCaps, CFG_TYPE_COMMON);
        if (commonCap == 0) {
            // Linux leaves such a device to the legacy driver; this guest has none.
            throw new GuestDriverException("virtio-pci device has no common configuration capability; legacy "
                    + "devices are not supported (VIRTIO 1.2 sections 4.1.4.3 and 4.1.5.1.1)");
        }
        int isrCap = findVirtioCap(vendorCaps, CFG_TYPE_ISR);
        int notifyCap = findVirtioCap(vendorCaps, CFG_TYPE_NOTIFY);
        if (isrCap == 0 || notifyCap == 0) {
            throw new GuestDriverException("virtio-pci device is missing capabilities: common " + hex(commonCap)
                    + ", ISR " + hex(isrCap) + ", notify " + hex(notifyCap) + " (VIRTIO 1.2 section 4.1.4)");
        }
        int deviceCap = findVirtioCap(vendorCaps, CFG_TYPE_DEVICE);
        if (msixCap != 0 && msixCap + 12 <= PCI_CONFIG_HEADER_SIZE) {
            // pci_msix_init at enumeration: MSI-X off until a driver asks for vectors, whatever an earlier
            // driver left behind.
            cfg.write(msixCap + MSIX_FLAGS, 2, cfg16(msixCap + MSIX_FLAGS) & ~(MSIX_FLAGS_ENABLE | MSIX_FLAGS_MASKALL));
        }
        msixEnabled = false;
        routing = null;
        common = map(commonCap, "common configuration", COMMON_CFG_MIN, 4);
        isr = map(isrCap, "ISR status", 1, 1);
        if (cfg8(notifyCap + CAP_LEN) < NOTIFY_CAP_SIZE) {
            throw new GuestDriverException("notification capability at " + hex(notifyCap) + " is "
                    + cfg8(notifyCap + CAP_LEN) + " bytes, shorter than struct virtio_pci_notify_cap (20, VIRTIO 1.2 "
                    + "section 4.1.4.4)");
        }
        notifyMultiplier = cfg32(notifyCap + NOTIFY_CAP_MULTIPLIER);
        notifyRegion = map(notifyCap, "notification", 2, 2);
        // Section 4.1.4.6: the device-specific structure is optional (a device without configuration).
        device = deviceCap == 0 ? null : map(deviceCap, "device configuration", 0, 4);
        // pci_enable_device + pci_set_master: decode the BARs, let the device write guest memory.
        int command = cfg16(PCI_COMMAND);
        cfg.write(PCI_COMMAND, 2, command | PCI_COMMAND_MEMORY | PCI_COMMAND_MASTER);
        probed = true;
        return deviceId;
    }

    /**
     * virtio_pci_find_capability: the first vendor capability of {@code type} whose BAR is a standard one
     * that is implemented. Others are skipped (section 4.1.4: the driver uses the first it can).
     */
    private int findVirtioCap(List<Integer> caps, int type) {
        for (int at : caps) {
            if (at + CAP_SIZE > PCI_CONFIG_HEADER_SIZE || cfg8(at + CAP_LEN) < CAP_SIZE) {
                continue; // section 4.1.4: cap_len is at least sizeof(struct virtio_pci_cap)
            }
            int bar = cfg8(at + CAP_BAR);
            if (bar >= PCI_STD_NUM_BARS) {
                continue; // section 4.1.4.1: reserved BAR values are ignored
            }
            if (cfg8(at + CAP_CFG_TYPE) == type) {
                RegisterWindow w = pci.bar(bar);
                if (w != null && w.size() > 0) {
                    return at;
                }
            }
        }
        return 0;
    }

    /** vp_modern_map_capability: checks length, alignment and that the structure lies inside its BAR. */
    private Region map(int at, String what, long minLength, int align) {
        int bar = cfg8(at + CAP_BAR);
        long offset = cfg32(at + CAP_OFFSET);
        long length = cfg32(at + CAP_LENGTH);
        RegisterWindow w = pci.bar(bar);
        if (length == 0 || length < minLength) {
            throw new GuestDriverException("virtio-pci " + what + " capability has length " + length + ", at least "
                    + minLength + " expected (VIRTIO 1.2 section 4.1.4)");
        }
        if ((offset & (align - 1)) != 0) {
            throw new GuestDriverException("virtio-pci " + what + " structure at offset 0x" + Long.toHexString(offset)
                    + " is not aligned to " + align + " bytes (VIRTIO 1.2 section 4.1.4)");
        }
        if (offset + length > w.size()) {
            throw new GuestDriverException("virtio-pci " + what + " structure " + length + "@0x"
                    + Long.toHexString(offset) + " is out of range of BAR " + bar + " (" + w.size() + " bytes)");
        }
        return new Region(bar, w, offset, length);
    }

    private static String hex(int value) {
        return "0x" + Integer.toHexString(value);
    }

    private int cfg8(int offset) {
        return (int) cfg.read(offset, 1) & 0xff;
    }

    private int cfg16(int offset) {
        return (int) cfg.read(offset, 2) & 0xffff;
    }

    private long cfg32(int offset) {
        return cfg.read(offset, 4) & 0xffff_ffffL;
    }

    private void checkProbed() {
        if (!probed) {
            throw new IllegalStateException("virtio-pci driver used before probe()");
        }
    }

    // Common configuration --------------------------------------------------------------------------------

    private long read(Region r, long off, int width) {
        long mask = width == 8 ? -1L : (1L << (8 * width)) - 1;
        return r.window().read(r.offset() + off, width) & mask;
    }

    private void write(Region r, long off, int width, long value) {
        r.window().write(r.offset() + off, width, value);
    }

    private int common16(int off) {
        checkProbed();
        return (int) read(common, off, 2);
    }

    private void common16(int off, int value) {
        checkProbed();
        write(common, off, 2, value & 0xffff);
    }

    private void common32(int off, long value) {
        checkProbed();
        write(common, off, 4, value & 0xffff_ffffL);
    }

    /** The device's PCI-level virtio device ID, as {@link #probe()} found it. */
    public int deviceId() {
        return deviceId;
    }

    /** num_queues of the common configuration. */
    public int numQueues() {
        return common16(COMMON_NUMQ);
    }

    @Override
    public int status() {
        checkProbed();
        return (int) read(common, COMMON_STATUS, 1);
    }

    @Override
    public void setStatus(int status) {
        checkProbed();
        if (status == 0) {
            // A reset unmaps every vector (section 4.1.5.1.2) and forgets the queues' notify addresses.
            routing = null;
            notifyAt = new long[0];
        }
        write(common, COMMON_STATUS, 1, status & 0xff);
    }

    @Override
    public long deviceFeatures() {
        checkProbed();
        write(common, COMMON_DFSELECT, 4, 0);
        long low = read(common, COMMON_DF, 4);
        write(common, COMMON_DFSELECT, 4, 1);
        long high = read(common, COMMON_DF, 4);
        return high << 32 | low;
    }

    @Override
    public void setDriverFeatures(long features) {
        common32(COMMON_GFSELECT, 0);
        common32(COMMON_GF, features);
        common32(COMMON_GFSELECT, 1);
        common32(COMMON_GF, features >>> 32);
    }

    @Override
    public int queueMaxSize(int queue) {
        // vp_modern_get_queue_size after setup_vq's index < num_queues check (section 4.1.4.3).
        if (queue < 0 || queue >= numQueues()) {
            return 0;
        }
        common16(COMMON_Q_SELECT, queue);
        return common16(COMMON_Q_SIZE);
    }

    @Override
    public boolean queueReady(int queue) {
        common16(COMMON_Q_SELECT, queue);
        return common16(COMMON_Q_ENABLE) != 0;
    }

    /** Selects the queue, writes its size and ring addresses (64-bit fields as two 32-bit halves, 4.1.3.1). */
    @Override
    public void setupQueue(int queue, QueueLayout layout) {
        common16(COMMON_Q_SELECT, queue);
        common16(COMMON_Q_SIZE, layout.size());
        common32(COMMON_Q_DESCLO, layout.descTable());
        common32(COMMON_Q_DESCHI, layout.descTable() >>> 32);
        common32(COMMON_Q_AVAILLO, layout.availRing());
        common32(COMMON_Q_AVAILHI, layout.availRing() >>> 32);
        common32(COMMON_Q_USEDLO, layout.usedRing());
        common32(COMMON_Q_USEDHI, layout.usedRing() >>> 32);
        mapNotify(queue);
    }

    /**
     * vp_modern_map_vq_notify: queue_notify_off * notify_off_multiplier, which must leave room for the 2-byte
     * write inside the notification structure (section 4.1.4.4).
     */
    private void mapNotify(int queue) {
        common16(COMMON_Q_SELECT, queue);
        long off = common16(COMMON_Q_NOFF);
        long at = off * notifyMultiplier;
        if (at + 2 > notifyRegion.length()) {
            throw new GuestDriverException("bad notification offset " + off + " (x " + notifyMultiplier + ") for queue "
                    + queue + ": past the " + notifyRegion.length() + "-byte notification structure (VIRTIO 1.2 "
                    + "section 4.1.4.4)");
        }
        long[] current = notifyAt;
        long[] next = java.util.Arrays.copyOf(current, Math.max(current.length, queue + 1));
        for (int q = current.length; q < next.length; q++) {
            next[q] = -1;
        }
        next[queue] = notifyRegion.offset() + at;
        notifyAt = next;
    }

    @Override
    public void enableQueue(int queue) {
        common16(COMMON_Q_SELECT, queue);
        common16(COMMON_Q_ENABLE, 1);
    }

    // Interrupts (vp_find_vqs) -----------------------------------------------------------------------------

    /** A vector write the device answered with NO_VECTOR: Linux's -EBUSY, the cue to try the next mode. */
    private static final class VectorRefused extends Exception {
        private static final long serialVersionUID = 1L;

        VectorRefused(String message) {
            super(message, null, false, false);
        }
    }

    @Override
    public InterruptRouting findQueues(List<QueueLayout> layouts) {
        checkProbed();
        int n = layouts.size();
        if (n < 1) {
            throw new IllegalArgumentException("no queue to set up");
        }
        List<String> refused = new ArrayList<>();
        // 1. MSI-X, config on vector 0, queue q on vector q + 1 (VP_VQ_VECTOR_POLICY_EACH).
        int[] each = new int[n];
        for (int q = 0; q < n; q++) {
            each[q] = FIRST_QUEUE_VECTOR + q;
        }
        InterruptRouting r = tryMsix(layouts, each, refused);
        if (r == null) {
            // 2. MSI-X, config on vector 0, every queue on vector 1 (VP_VQ_VECTOR_POLICY_SHARED).
            int[] shared = new int[n];
            java.util.Arrays.fill(shared, FIRST_QUEUE_VECTOR);
            r = tryMsix(layouts, shared, refused);
        }
        if (r == null) {
            // 3. INTx (vp_find_vqs_intx): no vector is written, the handler reads the ISR.
            intx();
            for (int q = 0; q < n; q++) {
                setupQueue(q, layouts.get(q));
            }
            r = InterruptRouting.line(n);
        }
        // vp_modern_find_vqs: enable the queues last; there is no going back from here but a reset.
        for (int q = 0; q < n; q++) {
            enableQueue(q);
        }
        routing = r;
        return r;
    }

    /** Why the MSI-X modes that {@link #findQueues} tried before the one it chose were given up. */
    public List<String> refusals() {
        return lastRefusals;
    }

    /**
     * vp_find_vqs_msix: enables MSI-X with enough vectors, maps the configuration vector and each queue's
     * vector, reading each back; undoes everything and returns null when a vector is refused or the table is
     * too small.
     */
    private InterruptRouting tryMsix(List<QueueLayout> layouts, int[] queueVectors, List<String> refused) {
        int vectors = 1 + java.util.Arrays.stream(queueVectors).max().orElse(0);
        int table = msixTableSize();
        if (table < vectors) {
            // pci_alloc_irq_vectors(min = max = nvectors) fails: -ENOSPC.
            refused.add(table == 0 ? "no MSI-X capability" : "MSI-X table of " + table + " vectors, " + vectors
                    + " needed");
            lastRefusals = List.copyOf(refused);
            return null;
        }
        enableMsix(vectors);
        int setUp = 0;
        try {
            // vp_request_msix_vectors: the configuration vector first.
            common16(COMMON_MSIX, CONFIG_VECTOR);
            if (common16(COMMON_MSIX) == NO_VECTOR) {
                throw new VectorRefused("config_msix_vector " + CONFIG_VECTOR + " refused");
            }
            for (int q = 0; q < layouts.size(); q++) {
                setupQueue(q, layouts.get(q));
                setUp = q + 1;
                // vp_active_vq: write queue_msix_vector, read it back (section 4.1.5.1.2).
                common16(COMMON_Q_SELECT, q);
                common16(COMMON_Q_MSIX, queueVectors[q]);
                if (common16(COMMON_Q_MSIX) == NO_VECTOR) {
                    throw new VectorRefused("queue_msix_vector " + queueVectors[q] + " of queue " + q + " refused");
                }
            }
            lastRefusals = List.copyOf(refused);
            return InterruptRouting.msix(CONFIG_VECTOR, queueVectors);
        } catch (VectorRefused e) {
            // vp_del_vqs: unmap the queues' and the configuration's vectors, then free the MSI-X vectors.
            for (int q = 0; q < setUp; q++) {
                common16(COMMON_Q_SELECT, q);
                common16(COMMON_Q_MSIX, NO_VECTOR);
            }
            common16(COMMON_MSIX, NO_VECTOR);
            disableMsix(vectors);
            refused.add(e.getMessage());
            lastRefusals = List.copyOf(refused);
            return null;
        }
    }

    /** Table size from Message Control, 0 without a usable MSI-X capability (or table BAR). */
    public int msixTableSize() {
        checkProbed();
        if (msixCap == 0 || msixCap + 12 > PCI_CONFIG_HEADER_SIZE) {
            return 0;
        }
        int size = (cfg16(msixCap + MSIX_FLAGS) & MSIX_FLAGS_QSIZE) + 1;
        RegisterWindow bar = msixBar();
        if (bar == null || msixTableOffset() + (long) size * MSIX_ENTRY_SIZE > bar.size()) {
            return 0;
        }
        return size;
    }

    private RegisterWindow msixBar() {
        int bir = (int) (cfg32(msixCap + MSIX_TABLE) & MSIX_BIR);
        return bir < PCI_STD_NUM_BARS ? pci.bar(bir) : null;
    }

    private long msixTableOffset() {
        return cfg32(msixCap + MSIX_TABLE) & ~(long) MSIX_BIR;
    }

    /**
     * msix_capability_init: enable with the function masked, program the entries, disable INTx, unmask the
     * function, then unmask each used vector (request_irq).
     */
    private void enableMsix(int vectors) {
        int control = cfg16(msixCap + MSIX_FLAGS);
        cfg.write(msixCap + MSIX_FLAGS, 2, control | MSIX_FLAGS_ENABLE | MSIX_FLAGS_MASKALL);
        RegisterWindow bar = msixBar();
        long table = msixTableOffset();
        for (int v = 0; v < vectors; v++) {
            long entry = table + (long) v * MSIX_ENTRY_SIZE;
            bar.write(entry + MSIX_ENTRY_LOWER_ADDR, 4, MSI_ADDRESS);
            bar.write(entry + MSIX_ENTRY_UPPER_ADDR, 4, 0);
            bar.write(entry + MSIX_ENTRY_DATA, 4, MSI_DATA_BASE + v);
        }
        cfg.write(PCI_COMMAND, 2, cfg16(PCI_COMMAND) | PCI_COMMAND_INTX_DISABLE);
        cfg.write(msixCap + MSIX_FLAGS, 2, (cfg16(msixCap + MSIX_FLAGS) | MSIX_FLAGS_ENABLE) & ~MSIX_FLAGS_MASKALL);
        for (int v = 0; v < vectors; v++) {
            bar.write(table + (long) v * MSIX_ENTRY_SIZE + MSIX_ENTRY_VECTOR_CTRL, 4, 0);
        }
        msixEnabled = true;
    }

    /** pci_free_irq_vectors: mask the vectors, clear MSI-X Enable, let INTx through again. */
    private void disableMsix(int vectors) {
        RegisterWindow bar = msixBar();
        long table = msixTableOffset();
        for (int v = 0; v < vectors; v++) {
            bar.write(table + (long) v * MSIX_ENTRY_SIZE + MSIX_ENTRY_VECTOR_CTRL, 4, MSIX_ENTRY_CTRL_MASKBIT);
        }
        cfg.write(msixCap + MSIX_FLAGS, 2, cfg16(msixCap + MSIX_FLAGS) & ~(MSIX_FLAGS_ENABLE | MSIX_FLAGS_MASKALL));
        msixEnabled = false;
        intx();
    }

    private void intx() {
        cfg.write(PCI_COMMAND, 2, cfg16(PCI_COMMAND) & ~PCI_COMMAND_INTX_DISABLE);
    }

    /** Whether MSI-X is enabled in the function's Message Control (by {@link #findQueues}). */
    public boolean msixEnabled() {
        return msixEnabled;
    }

    @Override
    public InterruptRouting routing() {
        return routing;
    }

    // Hot path ---------------------------------------------------------------------------------------------

    /** vp_notify: {@code iowrite16(index, notify address)}; the address was checked when the queue was set up. */
    @Override
    public void notify(int queue) {
        long[] at = notifyAt;
        if (queue < 0 || queue >= at.length || at[queue] < 0) {
            throw new IllegalStateException("queue " + queue + " has no notify address: it was not set up");
        }
        notifyRegion.window().write(at[queue], 2, queue);
    }

    @Override
    public int configGeneration() {
        checkProbed();
        return (int) read(common, COMMON_CFGGENERATION, 1);
    }

    @Override
    public int readConfig(int offset, int width) {
        if (width != 1 && width != 2 && width != 4) {
            throw new IllegalArgumentException("config access width must be 1, 2 or 4: " + width);
        }
        if (offset < 0 || offset % width != 0) {
            throw new IllegalArgumentException("unaligned config access: offset " + offset + ", width " + width);
        }
        checkProbed();
        if (device == null || offset + width > device.length()) {
            throw new GuestDriverException("device configuration read of " + width + " bytes at " + offset
                    + " is past the " + (device == null ? 0 : device.length())
                    + "-byte device configuration structure (VIRTIO 1.2 section 4.1.4.6)");
        }
        return (int) read(device, offset, width);
    }

    /** The ISR status (section 4.1.4.5): one byte, cleared by this read. */
    @Override
    public int interruptStatus() {
        checkProbed();
        return (int) read(isr, 0, 1);
    }

    /** Nothing to do: reading the ISR status acknowledged it (section 4.1.4.5). */
    @Override
    public void ackInterrupt(int bits) {
    }
}
