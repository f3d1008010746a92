package io.kickplug.guest.testing;

import static io.kickplug.api.transport.MmioRegisters.*;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.transport.GuestInterrupts;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.transport.PciFunction;
import io.kickplug.api.transport.RegisterWindow;
import io.kickplug.api.transport.TransportKind;
import io.kickplug.api.virtio.DeviceStatus;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A scripted virtio-mmio register window with no device behind it: it records every register write in
 * order and answers reads from fields a test sets. Enough for the driver's handshake (section 3.1.1), not
 * for I/O.
 */
public final class FakeMmioDevice implements RegisterWindow, GuestPort {

    /** One register write. */
    public record Write(long offset, long value) {
    }

    public int magic = MAGIC;
    public int version = 2;
    public int deviceId = 2;
    public long offeredFeatures;
    /** Whether the device keeps FEATURES_OK when the driver sets it. */
    public boolean keepFeaturesOk = true;
    /** QueueNumMax of each queue; queues past the end read 0. */
    public int[] queueNumMax = {256};
    /** Status reads that still return the old value after a write of 0 (a slow reset). */
    public int resetLagReads;
    /** Reads of the capacity's low half during which ConfigGeneration moves on (a concurrent update). */
    public int tornCapacityReads;
    public final ByteBuffer config = ByteBuffer.allocate(72).order(ByteOrder.LITTLE_ENDIAN);
    public int configGeneration;

    public final List<Write> writes = new ArrayList<>();
    public final List<Integer> statusWrites = new ArrayList<>();
    public int status;
    public long driverFeatures;
    public boolean driverFeaturesWritten;
    public final int[] queueNum = new int[8];
    public final long[] desc = new long[8];
    public final long[] driver = new long[8];
    public final long[] device = new long[8];
    public final boolean[] queueReady = new boolean[8];
    public volatile GuestInterrupts interrupts;
    public int interruptStatus;

    private final GuestMemory memory;
    private int lagLeft;
    private int deviceFeaturesSel;
    private int driverFeaturesSel;
    private int queueSel;

    public FakeMmioDevice(GuestMemory memory) {
        this.memory = memory;
    }

    public void setCapacity(long sectors) {
        config.putLong(0, sectors);
    }

    public void setNumQueues(int n) {
        config.putShort(34, (short) n);
    }

    /** Offsets of all writes to {@code register}, as positions in {@link #writes}. */
    public List<Integer> positionsOf(int register) {
        List<Integer> out = new ArrayList<>();
        for (int i = 0; i < writes.size(); i++) {
            if (writes.get(i).offset() == register) {
                out.add(i);
            }
        }
        return out;
    }

    /** Position in {@link #writes} of the status write of {@code value}. */
    public int positionOfStatus(int value) {
        for (int i = 0; i < writes.size(); i++) {
            if (writes.get(i).offset() == STATUS && writes.get(i).value() == value) {
                return i;
            }
        }
        return -1;
    }

    @Override
    public long size() {
        return 0x200;
    }

    @Override
    public long read(long offset, int width) {
        if (offset >= CONFIG) {
            int off = (int) (offset - CONFIG);
            if (off == 0 && tornCapacityReads > 0) {
                tornCapacityReads--;
                configGeneration++;
                config.putLong(0, config.getLong(0) + 8);
            }
            return switch (width) {
                case 1 -> config.get(off) & 0xFF;
                case 2 -> config.getShort(off) & 0xFFFF;
                case 4 -> config.getInt(off) & 0xFFFF_FFFFL;
                default -> throw new AssertionError("config read of width " + width);
            };
        }
        if (width != 4) {
            throw new AssertionError("control register read of width " + width);
        }
        return switch ((int) offset) {
            case MAGIC_VALUE -> magic & 0xFFFF_FFFFL;
            case VERSION -> version;
            case DEVICE_ID -> deviceId;
            case DEVICE_FEATURES -> deviceFeaturesSel == 0 ? offeredFeatures & 0xFFFF_FFFFL
                    : deviceFeaturesSel == 1 ? offeredFeatures >>> 32 : 0;
            case QUEUE_NUM_MAX -> queueSel < queueNumMax.length ? queueNumMax[queueSel] : 0;
            case QUEUE_READY -> queueSel < queueReady.length && queueReady[queueSel] ? 1 : 0;
            case INTERRUPT_STATUS -> interruptStatus;
            case STATUS -> readStatus();
            case CONFIG_GENERATION -> configGeneration;
            default -> 0;
        };
    }

    private int readStatus() {
        if (lagLeft > 0) {
            lagLeft--;
            return DeviceStatus.DRIVER_OK;
        }
        return status;
    }

    @Override
    public void write(long offset, int width, long value) {
        if (width != 4) {
            throw new AssertionError("register write of width " + width);
        }
        writes.add(new Write(offset, value));
        int v = (int) value;
        switch ((int) offset) {
            case DEVICE_FEATURES_SEL -> deviceFeaturesSel = v;
            case DRIVER_FEATURES_SEL -> driverFeaturesSel = v;
            case DRIVER_FEATURES -> {
                driverFeaturesWritten = true;
                if (driverFeaturesSel == 0) {
                    driverFeatures = (driverFeatures & 0xFFFF_FFFF_0000_0000L) | (value & 0xFFFF_FFFFL);
                } else {
                    driverFeatures = (driverFeatures & 0xFFFF_FFFFL) | (value << 32);
                }
            }
            case QUEUE_SEL -> queueSel = v;
            case QUEUE_NUM -> queueNum[queueSel] = v;
            case QUEUE_DESC_LOW -> desc[queueSel] = (desc[queueSel] & 0xFFFF_FFFF_0000_0000L) | (value & 0xFFFF_FFFFL);
            case QUEUE_DESC_HIGH -> desc[queueSel] = (desc[queueSel] & 0xFFFF_FFFFL) | (value << 32);
            case QUEUE_DRIVER_LOW -> driver[queueSel] = (driver[queueSel] & 0xFFFF_FFFF_0000_0000L) | (value & 0xFFFF_FFFFL);
            case QUEUE_DRIVER_HIGH -> driver[queueSel] = (driver[queueSel] & 0xFFFF_FFFFL) | (value << 32);
            case QUEUE_DEVICE_LOW -> device[queueSel] = (device[queueSel] & 0xFFFF_FFFF_0000_0000L) | (value & 0xFFFF_FFFFL);
            case QUEUE_DEVICE_HIGH -> device[queueSel] = (device[queueSel] & 0xFFFF_FFFFL) | (value << 32);
            case QUEUE_READY -> queueReady[queueSel] = v == 1;
            case INTERRUPT_ACK -> interruptStatus &= ~v;
            case STATUS -> writeStatus(v);
            default -> {
            }
        }
    }

    private void writeStatus(int v) {
        statusWrites.add(v);
        if (v == 0) {
            status = 0;
            lagLeft = resetLagReads;
            Arrays.fill(queueReady, false);
            driverFeatures = 0;
            return;
        }
        int next = v;
        if ((v & DeviceStatus.FEATURES_OK) != 0 && !keepFeaturesOk) {
            next &= ~DeviceStatus.FEATURES_OK;
        }
        status = next;
    }

    // GuestPort

    @Override
    public TransportKind kind() {
        return TransportKind.MMIO;
    }

    @Override
    public GuestMemory memory() {
        return memory;
    }

    @Override
    public RegisterWindow mmio() {
        return this;
    }

    @Override
    public PciFunction pci() {
        return null;
    }

    @Override
    public void connectInterrupts(GuestInterrupts interrupts) {
        this.interrupts = interrupts;
    }
}
