package io.kickplug.guest.blk;

import io.kickplug.api.blk.VirtioBlk;
import java.util.Objects;

/**
 * One virtio-blk request as the simulated guest issues it (VIRTIO 1.2 section 5.2.6): the caller's buffer
 * holds the data to write, or receives the data read once the request completed with {@link VirtioBlk#S_OK}.
 */
public final class BlkRequest {
    /** Status before completion. */
    public static final int PENDING = -1;
    /** Status of a request the driver failed without a device answer (reset, DEVICE_NEEDS_RESET). */
    public static final int DRIVER_FAILED = -2;

    private final int type;
    private final long sector;
    private final byte[] buffer;
    private final int length;
    private final Object tag;
    private int status = PENDING;
    private int usedLength;
    private String error;

    private BlkRequest(int type, long sector, byte[] buffer, int length, Object tag) {
        this.type = type;
        this.sector = sector;
        this.buffer = buffer;
        this.length = length;
        this.tag = tag;
    }

    /** A read of {@code length} bytes from {@code sector} into {@code buffer[0..length)}. */
    public static BlkRequest read(long sector, byte[] buffer, int length, Object tag) {
        checkData(sector, buffer, length);
        return new BlkRequest(VirtioBlk.T_IN, sector, buffer, length, tag);
    }

    /** A write of {@code buffer[0..length)} to {@code sector}. */
    public static BlkRequest write(long sector, byte[] buffer, int length, Object tag) {
        checkData(sector, buffer, length);
        return new BlkRequest(VirtioBlk.T_OUT, sector, buffer, length, tag);
    }

    /** A flush; its sector is 0 (section 5.2.6.1). */
    public static BlkRequest flush(Object tag) {
        return new BlkRequest(VirtioBlk.T_FLUSH, 0, null, 0, tag);
    }

    private static void checkData(long sector, byte[] buffer, int length) {
        Objects.requireNonNull(buffer, "buffer");
        if (sector < 0) {
            throw new IllegalArgumentException("negative sector " + sector);
        }
        // Section 5.2.6.1: the data of IN and OUT requests is a multiple of 512 bytes.
        if (length <= 0 || length % VirtioBlk.SECTOR_SIZE != 0 || length > buffer.length) {
            throw new IllegalArgumentException("data length " + length
                    + " must be a positive multiple of 512 within the buffer (VIRTIO 1.2 section 5.2.6.1)");
        }
    }

    public int type() {
        return type;
    }

    public long sector() {
        return sector;
    }

    public byte[] buffer() {
        return buffer;
    }

    public int length() {
        return length;
    }

    public Object tag() {
        return tag;
    }

    /** {@link #PENDING}, the device's status byte, or {@link #DRIVER_FAILED}. */
    public int status() {
        return status;
    }

    /** The used element's len (bytes the device says it wrote). */
    public int usedLength() {
        return usedLength;
    }

    /** Why the driver failed the request, when {@link #status()} is {@link #DRIVER_FAILED}. */
    public String error() {
        return error;
    }

    public boolean ok() {
        return status == VirtioBlk.S_OK;
    }

    void complete(int deviceStatus, int used) {
        this.status = deviceStatus;
        this.usedLength = used;
    }

    void fail(String reason) {
        this.status = DRIVER_FAILED;
        this.error = reason;
    }

    /** "write of 4096 bytes at sector 8", "flush". */
    public String describe() {
        return switch (type) {
            case VirtioBlk.T_IN -> "read of " + length + " bytes at sector " + sector;
            case VirtioBlk.T_OUT -> "write of " + length + " bytes at sector " + sector;
            case VirtioBlk.T_FLUSH -> "flush";
            default -> "request type " + type;
        };
    }

    /** "OK", "IOERR", "UNSUPP", or the raw value for anything else. */
    public static String statusName(int status) {
        return switch (status) {
            case VirtioBlk.S_OK -> "OK";
            case VirtioBlk.S_IOERR -> "IOERR";
            case VirtioBlk.S_UNSUPP -> "UNSUPP";
            case PENDING -> "pending";
            case DRIVER_FAILED -> "failed by the driver";
            default -> "unknown status " + status;
        };
    }
}
