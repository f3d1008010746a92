package io.kickplug.guest.transport;

import static io.kickplug.api.transport.PciRegisters.*;

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
    /** Linux's PCI_FIND_CAP_TTL: at most this many capabilities are followed (a loop guard). */
    static final int PCI_FIND_CAP_TTL = 48;
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
        int vendor = cfg16(VENDOR_ID);
        int pciDevice = cfg16(DEVICE_ID);
        if (vendor != VIRTIO_VENDOR) {
            throw new GuestDriverException(String.format("no virtio-pci device: vendor ID is 0x%04x, expected 0x%04x "
                    + "(VIRTIO 1.2 section 4.1.2)", vendor, VIRTIO_VENDOR));
        }
        if (pciDevice < VIRTIO_DEVICE_ID_FIRST || pciDevice > VIRTIO_DEVICE_ID_LAST) {
            throw new GuestDriverException(String.format("PCI device ID 0x%04x is not a virtio device ID (0x1000 to "
                    + "0x107f, VIRTIO 1.2 section 4.1.2)", pciDevice));
        }
        // Section 4.1.2: a transitional device names its type in the subsystem ID, a modern one in the device ID.
        deviceId = pciDevice < VIRTIO_DEVICE_ID_BASE ? cfg16(SUBSYSTEM_ID) : pciDevice - VIRTIO_DEVICE_ID_BASE;
        if ((cfg16(STATUS) & STATUS_CAPABILITIES_LIST) == 0) {
            throw new GuestDriverException("virtio-pci device has no capability list, so no virtio structures "
                    + "(VIRTIO 1.2 section 4.1.4)");
        }
        List<Integer> vendorCaps = new ArrayList<>();
        msixCap = 0;
        int ttl = PCI_FIND_CAP_TTL;
        int pos = cfg8(CAPABILITIES_POINTER);
        while (ttl-- > 0) {
            // __pci_find_next_cap_ttl: a pointer into the standard header ends the list, as does ID 0xff.
            if (pos < STD_HEADER_SIZE) {
                break;
            }
            pos &= ~3;
            int id = cfg8(pos);
            if (id == 0xff) {
                break;
            }
            if (id == CAP_ID_VENDOR) {
                vendorCaps.add(pos);
            } else if (id == CAP_ID_MSIX && msixCap == 0) {
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
        if (msixCap != 0 && msixCap + 12 <= CONFIG_HEADER_SIZE) {
            // pci_msix_init at enumeration: MSI-X off until a driver asks for vectors, whatever an earlier
            // driver left behind.
            cfg.write(msixCap + MSIX_MESSAGE_CONTROL, 2, cfg16(msixCap + MSIX_MESSAGE_CONTROL) & ~(MSIX_CONTROL_ENABLE | MSIX_CONTROL_FUNCTION_MASK));
        }
        msixEnabled = false;
        routing = null;
        common = map(commonCap, "common configuration", COMMON_CFG_SIZE_1_0, 4);
        isr = map(isrCap, "ISR status", 1, 1);
        if (cfg8(notifyCap + VIRTIO_CAP_LEN) < VIRTIO_NOTIFY_CAP_SIZE) {
            throw new GuestDriverException("notification capability at " + hex(notifyCap) + " is "
                    + cfg8(notifyCap + VIRTIO_CAP_LEN) + " bytes, shorter than struct virtio_pci_notify_cap (20, VIRTIO 1.2 "
                    + "section 4.1.4.4)");
        }
        notifyMultiplier = cfg32(notifyCap + VIRTIO_CAP_NOTIFY_OFF_MULTIPLIER);
        notifyRegion = map(notifyCap, "notification", 2, 2);
        // Section 4.1.4.6: the device-specific structure is optional (a device without configuration).
        device = deviceCap == 0 ? null : map(deviceCap, "device configuration", 0, 4);
        // pci_enable_device + pci_set_master: decode the BARs, let the device write guest memory.
        int command = cfg16(COMMAND);
        cfg.write(COMMAND, 2, command | COMMAND_MEMORY | COMMAND_BUS_MASTER);
        probed = true;
        return deviceId;
    }

    /**
     * virtio_pci_find_capability: the first vendor capability of {@code type} whose BAR is a standard one
     * that is implemented. Others are skipped (section 4.1.4: the driver uses the first it can).
     */
    private int findVirtioCap(List<Integer> caps, int type) {
        for (int at : caps) {
            if (at + VIRTIO_CAP_SIZE > CONFIG_HEADER_SIZE || cfg8(at + VIRTIO_CAP_LEN) < VIRTIO_CAP_SIZE) {
                continue; // section 4.1.4: cap_len is at least sizeof(struct virtio_pci_cap)
            }
            int bar = cfg8(at + VIRTIO_CAP_BAR);
            if (bar >= NUM_BARS) {
                continue; // section 4.1.4.1: reserved BAR values are ignored
            }
            if (cfg8(at + VIRTIO_CAP_CFG_TYPE) == type) {
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
        int bar = cfg8(at + VIRTIO_CAP_BAR);
        long offset = cfg32(at + VIRTIO_CAP_OFFSET);
        long length = cfg32(at + VIRTIO_CAP_LENGTH);
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

    /** A 64-bit field as two 32-bit halves, low first (section 4.1.3.1). */
    private void common64(int off, long value) {
        common32(off, value);
        common32(off + 4, value >>> 32);
    }

    /** A 16-bit field of queue {@code queue}: queue_select, then the field (section 4.1.4.3). */
    private int queue16(int queue, int off) {
        common16(COMMON_QUEUE_SELECT, queue);
        return common16(off);
    }

    private void queue16(int queue, int off, int value) {
        common16(COMMON_QUEUE_SELECT, queue);
        common16(off, value);
    }

    /** The device's PCI-level virtio device ID, as {@link #probe()} found it. */
    public int deviceId() {
        return deviceId;
    }

    /** num_queues of the common configuration. */
    public int numQueues() {
        return common16(COMMON_NUM_QUEUES);
    }

    @Override
    public int status() {
        checkProbed();
        return (int) read(common, COMMON_DEVICE_STATUS, 1);
    }

    @Override
    public void setStatus(int status) {
        checkProbed();
        if (status == 0) {
            // A reset unmaps every vector (section 4.1.5.1.2) and forgets the queues' notify addresses.
            routing = null;
            notifyAt = new long[0];
        }
        write(common, COMMON_DEVICE_STATUS, 1, status & 0xff);
    }

    @Override
    public long deviceFeatures() {
        checkProbed();
        return FeatureWords.read(word -> write(common, COMMON_DEVICE_FEATURE_SELECT, 4, word),
                () -> read(common, COMMON_DEVICE_FEATURE, 4));
    }

    @Override
    public void setDriverFeatures(long features) {
        FeatureWords.write(features, word -> common32(COMMON_DRIVER_FEATURE_SELECT, word),
                bits -> common32(COMMON_DRIVER_FEATURE, bits));
    }

    @Override
    public int queueMaxSize(int queue) {
        // vp_modern_get_queue_size after setup_vq's index < num_queues check (section 4.1.4.3).
        if (queue < 0 || queue >= numQueues()) {
            return 0;
        }
        return queue16(queue, COMMON_QUEUE_SIZE);
    }

    @Override
    public boolean queueReady(int queue) {
        return queue16(queue, COMMON_QUEUE_ENABLE) != 0;
    }

    /** Selects the queue, writes its size and ring addresses (64-bit fields as two 32-bit halves, 4.1.3.1). */
    @Override
    public void setupQueue(int queue, QueueLayout layout) {
        queue16(queue, COMMON_QUEUE_SIZE, layout.size());
        common64(COMMON_QUEUE_DESC, layout.descTable());
        common64(COMMON_QUEUE_DRIVER, layout.availRing());
        common64(COMMON_QUEUE_DEVICE, layout.usedRing());
        mapNotify(queue);
    }

    /**
     * vp_modern_map_vq_notify: queue_notify_off * notify_off_multiplier, which must leave room for the 2-byte
     * write inside the notification structure (section 4.1.4.4).
     */
    private void mapNotify(int queue) {
        long off = queue16(queue, COMMON_QUEUE_NOTIFY_OFF);
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
        queue16(queue, COMMON_QUEUE_ENABLE, 1);
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
            common16(COMMON_CONFIG_MSIX_VECTOR, CONFIG_VECTOR);
            if (common16(COMMON_CONFIG_MSIX_VECTOR) == NO_VECTOR) {
                throw new VectorRefused("config_msix_vector " + CONFIG_VECTOR + " refused");
            }
            for (int q = 0; q < layouts.size(); q++) {
                setupQueue(q, layouts.get(q));
                setUp = q + 1;
                // vp_active_vq: write queue_msix_vector, read it back (section 4.1.5.1.2).
                queue16(q, COMMON_QUEUE_MSIX_VECTOR, queueVectors[q]);
                if (common16(COMMON_QUEUE_MSIX_VECTOR) == NO_VECTOR) {
                    throw new VectorRefused("queue_msix_vector " + queueVectors[q] + " of queue " + q + " refused");
                }
            }
            lastRefusals = List.copyOf(refused);
            return InterruptRouting.msix(CONFIG_VECTOR, queueVectors);
        } catch (VectorRefused e) {
            // vp_del_vqs: unmap the queues' and the configuration's vectors, then free the MSI-X vectors.
            for (int q = 0; q < setUp; q++) {
                queue16(q, COMMON_QUEUE_MSIX_VECTOR, NO_VECTOR);
            }
            common16(COMMON_CONFIG_MSIX_VECTOR, NO_VECTOR);
            disableMsix(vectors);
            refused.add(e.getMessage());
            lastRefusals = List.copyOf(refused);
            return null;
        }
    }

    /** Table size from Message Control, 0 without a usable MSI-X capability (or table BAR). */
    public int msixTableSize() {
        checkProbed();
        if (msixCap == 0 || msixCap + 12 > CONFIG_HEADER_SIZE) {
            return 0;
        }
        int size = (cfg16(msixCap + MSIX_MESSAGE_CONTROL) & MSIX_CONTROL_TABLE_SIZE_MASK) + 1;
        RegisterWindow bar = msixBar();
        if (bar == null || msixTableOffset() + (long) size * MSIX_ENTRY_SIZE > bar.size()) {
            return 0;
        }
        return size;
    }

    private RegisterWindow msixBar() {
        int bir = (int) (cfg32(msixCap + MSIX_TABLE_OFFSET_BIR) & MSIX_BIR_MASK);
        return bir < NUM_BARS ? pci.bar(bir) : null;
    }

    private long msixTableOffset() {
        return cfg32(msixCap + MSIX_TABLE_OFFSET_BIR) & ~(long) MSIX_BIR_MASK;
    }

    /**
     * msix_capability_init: enable with the function masked, program the entries, disable INTx, unmask the
     * function, then unmask each used vector (request_irq).
     */
    private void enableMsix(int vectors) {
        int control = cfg16(msixCap + MSIX_MESSAGE_CONTROL);
        cfg.write(msixCap + MSIX_MESSAGE_CONTROL, 2, control | MSIX_CONTROL_ENABLE | MSIX_CONTROL_FUNCTION_MASK);
        RegisterWindow bar = msixBar();
        long table = msixTableOffset();
        for (int v = 0; v < vectors; v++) {
            long entry = table + (long) v * MSIX_ENTRY_SIZE;
            bar.write(entry + MSIX_ENTRY_ADDR_LO, 4, MSI_ADDRESS);
            bar.write(entry + MSIX_ENTRY_ADDR_HI, 4, 0);
            bar.write(entry + MSIX_ENTRY_DATA, 4, MSI_DATA_BASE + v);
        }
        cfg.write(COMMAND, 2, cfg16(COMMAND) | COMMAND_INTX_DISABLE);
        cfg.write(msixCap + MSIX_MESSAGE_CONTROL, 2, (cfg16(msixCap + MSIX_MESSAGE_CONTROL) | MSIX_CONTROL_ENABLE) & ~MSIX_CONTROL_FUNCTION_MASK);
        for (int v = 0; v < vectors; v++) {
            bar.write(table + (long) v * MSIX_ENTRY_SIZE + MSIX_ENTRY_VECTOR_CONTROL, 4, 0);
        }
        msixEnabled = true;
    }

    /** pci_free_irq_vectors: mask the vectors, clear MSI-X Enable, let INTx through again. */
    private void disableMsix(int vectors) {
        RegisterWindow bar = msixBar();
        long table = msixTableOffset();
        for (int v = 0; v < vectors; v++) {
            bar.write(table + (long) v * MSIX_ENTRY_SIZE + MSIX_ENTRY_VECTOR_CONTROL, 4, MSIX_ENTRY_MASKED);
        }
        cfg.write(msixCap + MSIX_MESSAGE_CONTROL, 2, cfg16(msixCap + MSIX_MESSAGE_CONTROL) & ~(MSIX_CONTROL_ENABLE | MSIX_CONTROL_FUNCTION_MASK));
        msixEnabled = false;
        intx();
    }

    private void intx() {
        cfg.write(COMMAND, 2, cfg16(COMMAND) & ~COMMAND_INTX_DISABLE);
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
        return (int) read(common, COMMON_CONFIG_GENERATION, 1);
    }

    @Override
    public int readConfig(int offset, int width) {
        ConfigAccess.check(offset, width);
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
