package io.kickplug.blk.request;

import static io.kickplug.api.blk.VirtioBlk.HEADER_SIZE;
import static io.kickplug.api.blk.VirtioBlk.ID_BYTES;
import static io.kickplug.api.blk.VirtioBlk.SECTOR_SIZE;

import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.GuestFaultException;

/**
 * Turns a descriptor chain into a {@link BlkRequest}, through the chain's byte cursors only: the device
 * must not assume any particular arrangement of descriptors (VIRTIO 1.2 section 2.7.4.1).
 */
public final class BlkRequestParser {

    private BlkRequestParser() {
    }

    /**
     * Parses {@code chain}.
     *
     * @param capacitySectors the disk's capacity in 512-byte sectors
     * @param readOnly whether writes must be refused (section 5.2.6.2)
     * @return the request; a rejected one when its content is wrong but its framing is sound
     * @throws GuestFaultException when the chain cannot carry a request at all: fewer than 16 device-readable
     *     bytes for the header, or no device-writable byte for the status
     */
    public static BlkRequest parse(DescriptorChain chain, long capacitySectors, boolean readOnly) {
        ChainReader reader = chain.reader();
        ChainWriter writer = chain.writer();
        // 5.2.6: the header is the first 16 device-readable bytes, however the driver split them (2.7.4).
        if (reader.remaining() < HEADER_SIZE) {
            throw new GuestFaultException("5.2.6", "virtio-blk request header needs " + HEADER_SIZE
                    + " device-readable bytes, the chain has " + reader.remaining());
        }
        // 5.2.6: the status is the last device-writable byte, after any data.
        if (writer.remaining() < 1) {
            throw new GuestFaultException("5.2.6", "virtio-blk request has no device-writable byte for its status");
        }
        int type = reader.readU32();
        reader.readU32(); // reserved (legacy ioprio): ignored
        long sector = reader.readU64();
        ChainWriter status = writer.splitAt(writer.remaining() - 1);
        // What is left: reader = readable bytes after the header, writer = writable bytes before the status.
        long readableData = reader.remaining();
        long writableData = writer.remaining();
        RequestType kind = RequestType.dispatch(type);
        switch (kind) {
            case IN: {
                Rejection bad = readableData != 0
                        ? Rejection.ioError("IN request carries " + readableData
                                + " device-readable data bytes; its data must be device-writable (5.2.6)")
                        : checkData(writableData, sector, capacitySectors);
                return new BlkRequest(chain.head(), type, kind, sector, bad == null ? writableData : 0, null,
                        bad == null ? writer : null, status, bad);
            }
            case OUT: {
                Rejection bad;
                if (writableData != 0) {
                    bad = Rejection.ioError("OUT request carries " + writableData
                            + " device-writable data bytes; its data must be device-readable (5.2.6)");
                } else {
                    bad = checkData(readableData, sector, capacitySectors);
                    if (bad == null && readOnly) {
                        bad = Rejection.ioError("write to a read-only disk (5.2.6.2)");
                    }
                }
                return new BlkRequest(chain.head(), type, kind, sector, bad == null ? readableData : 0,
                        bad == null ? reader : null, null, status, bad);
            }
            case FLUSH:
                return new BlkRequest(chain.head(), type, kind, sector, 0, null, null, status, null);
            case GET_ID: {
                // 5.2.6.1 asks for 20 bytes; a shorter buffer gets a truncated id, as QEMU does.
                long idBytes = Math.min(writableData, ID_BYTES);
                writer.splitAt(idBytes);
                return new BlkRequest(chain.head(), type, kind, sector, idBytes, null, writer, status, null);
            }
            default:
                return new BlkRequest(chain.head(), type, kind, sector, 0, null, null, status,
                        Rejection.unsupported("unsupported request type " + Integer.toUnsignedString(type)
                                + " (5.2.6)"));
        }
    }

    /** Length and range checks for IN and OUT data; {@code null} when both pass. */
    private static Rejection checkData(long length, long sector, long capacitySectors) {
        // 5.2.6.1: the driver MUST make IN/OUT data a multiple of 512 bytes.
        if (length % SECTOR_SIZE != 0) {
            return Rejection.ioError("data length " + length + " is not a multiple of " + SECTOR_SIZE
                    + " (5.2.6.1)");
        }
        if (!inRange(sector, length / SECTOR_SIZE, capacitySectors)) {
            return Rejection.ioError("sectors " + Long.toUnsignedString(sector) + "+" + length / SECTOR_SIZE
                    + " lie beyond the capacity of " + capacitySectors + " sectors (5.2.6)");
        }
        return null;
    }

    /**
     * Whether {@code [sector, sector + sectors)} fits in the capacity. {@code sector} and the capacity are
     * unsigned; {@code sectors} is non-negative. No sum is formed, so nothing can overflow.
     */
    static boolean inRange(long sector, long sectors, long capacitySectors) {
        if (Long.compareUnsigned(sector, capacitySectors) > 0) {
            return false; // also every sector >= 2^63 on a disk of usual size
        }
        return Long.compareUnsigned(sectors, capacitySectors - sector) <= 0;
    }
}
