package io.kickplug.virtio.transport;

import static io.kickplug.virtio.pci.PciRegisters.*;

import io.kickplug.api.transport.RegisterWindow;
import java.util.function.IntConsumer;
import java.util.logging.Logger;

/**
 * An MSI-X table and pending-bit array in one memory BAR (PCI Local Bus 3.0 section 6.8.2), with the
 * enable and function-mask bits of the capability's Message Control. A signalled vector that is masked
 * (per vector or function-wide) sets its pending bit and is delivered when it is unmasked.
 *
 * <p>{@link #signal(int)} comes from device threads, register accesses from vCPU threads: state is
 * guarded by this object's monitor, and delivery happens outside it.
 */
final class MsixTable implements RegisterWindow {
    private static final Logger LOG = Logger.getLogger(MsixTable.class.getName());

    private final int vectors;
    private final int pbaOffset;
    private final long size;
    /** Four dwords per entry: address low, address high, data, vector control. */
    private final int[] entries;
    private final long[] pending;
    private final IntConsumer deliver;
    private volatile boolean enabled;
    private boolean functionMask;

    /**
     * @param vectors table size, 1 to 0x800
     * @param deliver raises a vector on the guest; called without any lock held
     */
    MsixTable(int vectors, IntConsumer deliver) {
        if (vectors < 1 || vectors > MSIX_MAX_VECTORS) {
            throw new IllegalArgumentException("MSI-X table size " + vectors + " is not in 1.." + MSIX_MAX_VECTORS);
        }
        this.vectors = vectors;
        this.deliver = deliver;
        this.entries = new int[vectors * 4];
        this.pending = new long[(vectors + 63) / 64];
        int tableBytes = vectors * MSIX_ENTRY_SIZE;
        this.pbaOffset = Math.max(0x800, align(tableBytes, 0x800));
        this.size = Long.highestOneBit(Math.max(0x1000, pbaOffset + 8L * pending.length) * 2 - 1);
        for (int v = 0; v < vectors; v++) {
            // PCI 3.0 section 6.8.2.9: every vector's mask bit is set after reset.
            entries[4 * v + 3] = MSIX_ENTRY_MASKED;
        }
    }

    private static int align(int value, int alignment) {
        return (value + alignment - 1) & -alignment;
    }

    int vectors() {
        return vectors;
    }

    int tableOffset() {
        return MSIX_TABLE_OFFSET;
    }

    int pbaOffset() {
        return pbaOffset;
    }

    boolean enabled() {
        return enabled;
    }

    /** Message Control changed: MSI-X Enable and Function Mask. Delivers what became unmasked. */
    void setControl(boolean enable, boolean mask) {
        synchronized (this) {
            enabled = enable;
            functionMask = mask;
        }
        deliverUnmasked();
    }

    /** Requests vector {@code vector}; sets its pending bit instead while it is masked. */
    void signal(int vector) {
        if (vector < 0 || vector >= vectors) {
            return;
        }
        synchronized (this) {
            if (!enabled) {
                return;
            }
            if (masked(vector)) {
                pending[vector >>> 6] |= 1L << vector;
                return;
            }
        }
        deliver.accept(vector);
    }

    synchronized boolean isPending(int vector) {
        return (pending[vector >>> 6] & (1L << vector)) != 0;
    }

    private boolean masked(int vector) {
        return functionMask || (entries[4 * vector + 3] & MSIX_ENTRY_MASKED) != 0;
    }

    private void deliverUnmasked() {
        int[] due = new int[vectors];
        int n = 0;
        synchronized (this) {
            if (!enabled || functionMask) {
                return;
            }
            for (int v = 0; v < vectors; v++) {
                long bit = 1L << v;
                if ((pending[v >>> 6] & bit) != 0 && !masked(v)) {
                    pending[v >>> 6] &= ~bit;
                    due[n++] = v;
                }
            }
        }
        for (int i = 0; i < n; i++) {
            deliver.accept(due[i]);
        }
    }

    // RegisterWindow: the BAR holding the table and the PBA. Software uses aligned dword or qword accesses
    // (PCI 3.0 section 6.8.2); anything else decodes to nothing.

    @Override
    public long size() {
        return size;
    }

    @Override
    public long read(long offset, int width) {
        if (!aligned(offset, width)) {
            return 0;
        }
        if (width == 8) {
            return (read(offset, 4) & 0xffffffffL) | (read(offset + 4, 4) << 32);
        }
        synchronized (this) {
            if (offset < (long) vectors * MSIX_ENTRY_SIZE) {
                return entries[(int) (offset >>> 2)] & 0xffffffffL;
            }
            long p = offset - pbaOffset;
            if (p >= 0 && p < 8L * pending.length) {
                long word = pending[(int) (p >>> 3)];
                return ((p & 4) == 0 ? word : word >>> 32) & 0xffffffffL;
            }
        }
        return 0;
    }

    @Override
    public void write(long offset, int width, long value) {
        if (!aligned(offset, width)) {
            LOG.fine(() -> "MSI-X BAR write of " + width + " bytes at 0x" + Long.toHexString(offset) + " ignored");
            return;
        }
        if (width == 8) {
            write(offset, 4, value);
            write(offset + 4, 4, value >>> 32);
            return;
        }
        boolean unmasked = false;
        synchronized (this) {
            if (offset >= (long) vectors * MSIX_ENTRY_SIZE) {
                return; // the PBA is read-only; the rest decodes to nothing
            }
            int i = (int) (offset >>> 2);
            if ((i & 3) == 3) {
                // Vector Control: only the mask bit is defined.
                int old = entries[i];
                entries[i] = (int) value & MSIX_ENTRY_MASKED;
                unmasked = (old & MSIX_ENTRY_MASKED) != 0 && (entries[i] & MSIX_ENTRY_MASKED) == 0;
            } else {
                entries[i] = (int) value;
            }
        }
        if (unmasked) {
            deliverUnmasked();
        }
    }

    private boolean aligned(long offset, int width) {
        return (width == 4 || width == 8) && offset >= 0 && offset + width <= size && (offset & (width - 1)) == 0;
    }
}
