package io.kickplug.blk.request;

import static io.kickplug.api.blk.VirtioBlk.HEADER_SIZE;
import static io.kickplug.api.blk.VirtioBlk.ID_BYTES;
import static io.kickplug.api.blk.VirtioBlk.SECTOR_SIZE;

import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import io.kickplug.api.virtio.DescriptorChain;
import io.kickplug.api.virtio.GuestFaultException;
import java.util.ArrayList;
import java.util.List;

/**
 * Turns a descriptor chain into a {@link BlkRequest}, through the chain's byte cursors only: the device
 * must not assume any particular arrangement of descriptors (VIRTIO 1.2 section 2.7.4.1).
 */
public final class BlkRequestParser {

    private BlkRequestParser() {
    }

    /** Bytes of a GET_LIFETIME answer: {@code le16 pre_eol_info, device_lifetime_est_typ_a, _typ_b}. */
    public static final int LIFETIME_BYTES = 6;

    /**
     * Parses {@code chain} as a device on which none of DISCARD, WRITE_ZEROES, SECURE_ERASE and LIFETIME was
     * negotiated: requests of those types are refused with UNSUPP.
     */
    public static BlkRequest parse(DescriptorChain chain, long capacitySectors, boolean readOnly) {
        return parse(chain, capacitySectors, readOnly, 0, BlkLimits.DEFAULTS);
    }

    /**
     * Parses {@code chain}.
     *
     * @param capacitySectors the disk's capacity in 512-byte sectors
     * @param readOnly whether writes must be refused (section 5.2.6.2)
     * @param negotiatedFeatures the features of the current negotiation; a request type whose feature is
     *     not among them is refused with UNSUPP
     * @param limits the segment limits the configuration space announces (section 5.2.4)
     * @return the request; a rejected one when its content is wrong but its framing is sound
     * @throws GuestFaultException when the chain cannot carry a request at all: fewer than 16 device-readable
     *     bytes for the header, or no device-writable byte for the status
     */
    public static BlkRequest parse(DescriptorChain chain, long capacitySectors, boolean readOnly,
            long negotiatedFeatures, BlkLimits limits) {
        return parseInto(new BlkRequest(), chain, capacitySectors, readOnly, negotiatedFeatures, limits);
    }

    /**
     * Parses {@code chain} into {@code target}, a request of a pool, as {@link #parse}; for IN and OUT nothing
     * is allocated (the header is read in place through the chain's cursors).
     *
     * @return {@code target}
     */
    public static BlkRequest parseInto(BlkRequest target, DescriptorChain chain, long capacitySectors,
            boolean readOnly, long negotiatedFeatures, BlkLimits limits) {
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
        // le32 type, then le32 reserved (legacy ioprio, ignored): one little-endian 64-bit read.
        int type = (int) reader.readU64();
        long sector = reader.readU64();
        ChainWriter status = writer.splitAt(writer.remaining() - 1);
        // What is left: reader = readable bytes after the header, writer = writable bytes before the status.
        long readableData = reader.remaining();
        long writableData = writer.remaining();
        RequestType kind = RequestType.dispatch(type);
        long feature = kind.requiredFeature();
        if (feature != 0 && (negotiatedFeatures & feature) == 0) {
            // 5.2.3/5.2.6: these types exist only with their feature; without it they are unknown types.
            return target.set(chain.head(), type, kind, sector, 0, null, null, status,
                    Rejection.unsupported("request type " + Integer.toUnsignedString(type) + " (" + kind
                            + ") needs a feature that was not negotiated (5.2.3)"));
        }
        switch (kind) {
            case IN: {
                Rejection bad = readableData != 0
                        ? Rejection.ioError("IN request carries " + readableData
                                + " device-readable data bytes; its data must be device-writable (5.2.6)")
                        : checkData(writableData, sector, capacitySectors);
                return target.set(chain.head(), type, kind, sector, bad == null ? writableData : 0, null,
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
                return target.set(chain.head(), type, kind, sector, bad == null ? readableData : 0,
                        bad == null ? reader : null, null, status, bad);
            }
            case FLUSH:
                return target.set(chain.head(), type, kind, sector, 0, null, null, status, null);
            case GET_ID: {
                // 5.2.6.1 asks for 20 bytes; a shorter buffer gets a truncated id, as QEMU does.
                long idBytes = Math.min(writableData, ID_BYTES);
                writer.splitAt(idBytes);
                return target.set(chain.head(), type, kind, sector, idBytes, null, writer, status, null);
            }
            case GET_LIFETIME: {
                Rejection bad = null;
                if (readableData != 0) {
                    bad = Rejection.ioError("GET_LIFETIME request carries " + readableData
                            + " device-readable data bytes; its answer is device-writable (5.2.6)");
                } else if (writableData < LIFETIME_BYTES) {
                    bad = Rejection.ioError("GET_LIFETIME request has room for " + writableData + " bytes, the answer"
                            + " takes " + LIFETIME_BYTES + " (5.2.6)");
                }
                if (bad != null) {
                    return target.set(chain.head(), type, kind, sector, 0, null, null, status, bad);
                }
                writer.splitAt(LIFETIME_BYTES);
                return target.set(chain.head(), type, kind, sector, LIFETIME_BYTES, null, writer, status, null);
            }
            case DISCARD:
            case WRITE_ZEROES:
            case SECURE_ERASE:
                return parseSegments(target, chain.head(), type, kind, sector, reader, writableData, status,
                        capacitySectors, readOnly, limits);
            default:
                return target.set(chain.head(), type, kind, sector, 0, null, null, status,
                        Rejection.unsupported("unsupported request type " + Integer.toUnsignedString(type)
                                + " (5.2.6)"));
        }
    }

    /**
     * DISCARD, WRITE_ZEROES and SECURE_ERASE (section 5.2.6): the data is an array of 16-byte segments,
     * device-readable. Every segment is copied out of the chain and checked before anything runs; one bad
     * segment refuses the whole request.
     */
    private static BlkRequest parseSegments(BlkRequest target, int head, int type, RequestType kind, long sector, ChainReader reader,
            long writableData, ChainWriter status, long capacitySectors, boolean readOnly, BlkLimits limits) {
        long readableData = reader.remaining();
        Rejection bad = null;
        List<DiscardSegment> segments = List.of();
        if (writableData != 0) {
            bad = Rejection.ioError(kind + " request carries " + writableData
                    + " device-writable data bytes; its segments must be device-readable (5.2.6)");
        } else if (readableData == 0 || readableData % DiscardSegment.BYTES != 0) {
            bad = Rejection.ioError(kind + " request carries " + readableData + " data bytes, not a positive"
                    + " multiple of the " + DiscardSegment.BYTES + "-byte segment (5.2.6)");
        } else if (readOnly) {
            bad = Rejection.ioError(kind + " on a read-only disk (5.2.6.2)");
        } else {
            long count = readableData / DiscardSegment.BYTES;
            int maxSegments = maxSegments(kind, limits);
            if (count > maxSegments) {
                // 5.2.6.1: the driver MUST NOT exceed the announced segment count.
                bad = Rejection.ioError(kind + " request has " + count + " segments, the device takes at most "
                        + maxSegments + " (5.2.6.1)");
            } else {
                segments = readSegments(reader, (int) count);
                bad = checkSegments(kind, segments, capacitySectors, limits);
            }
        }
        if (bad != null) {
            return target.set(head, type, kind, sector, 0, null, null, status, bad);
        }
        return target.set(head, type, kind, sector, readableData, null, null, status, null, segments);
    }

    private static int maxSegments(RequestType kind, BlkLimits limits) {
        return switch (kind) {
            case DISCARD -> limits.maxDiscardSeg();
            case WRITE_ZEROES -> limits.maxWriteZeroesSeg();
            default -> limits.maxSecureEraseSeg();
        };
    }

    private static long maxSectors(RequestType kind, BlkLimits limits) {
        return switch (kind) {
            case DISCARD -> limits.maxDiscardSectors();
            case WRITE_ZEROES -> limits.maxWriteZeroesSectors();
            default -> limits.maxSecureEraseSectors();
        };
    }

    private static List<DiscardSegment> readSegments(ChainReader reader, int count) {
        List<DiscardSegment> segments = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            long sector = reader.readU64();
            long numSectors = Integer.toUnsignedLong(reader.readU32());
            int flags = reader.readU32();
            segments.add(new DiscardSegment(sector, numSectors, flags));
        }
        return segments;
    }

    /**
     * Flags first (an unknown flag refuses the request whatever else is wrong with it), then sizes and
     * ranges.
     */
    private static Rejection checkSegments(RequestType kind, List<DiscardSegment> segments, long capacitySectors,
            BlkLimits limits) {
        for (int i = 0; i < segments.size(); i++) {
            DiscardSegment segment = segments.get(i);
            int unknown = segment.flags() & ~DiscardSegment.FLAG_UNMAP;
            if (unknown != 0) {
                // 5.2.6.2: unknown flags on discard, secure erase and write zeroes -> UNSUPP.
                return Rejection.unsupported(kind + " segment " + i + " has unknown flags 0x"
                        + Integer.toHexString(unknown) + " (5.2.6.2)");
            }
            if (kind == RequestType.DISCARD && segment.unmap()) {
                // 5.2.6.2: a discard with the unmap flag -> UNSUPP.
                return Rejection.unsupported("DISCARD segment " + i + " has the unmap flag (5.2.6.2)");
            }
        }
        long maxSectors = maxSectors(kind, limits);
        for (int i = 0; i < segments.size(); i++) {
            DiscardSegment segment = segments.get(i);
            if (segment.numSectors() > maxSectors) {
                // 5.2.6.1: the driver MUST NOT exceed the announced sector limit.
                return Rejection.ioError(kind + " segment " + i + " spans " + segment.numSectors()
                        + " sectors, the device takes at most " + maxSectors + " (5.2.6.1)");
            }
            if (!inRange(segment.sector(), segment.numSectors(), capacitySectors)) {
                return Rejection.ioError(kind + " segment " + i + ": sectors "
                        + Long.toUnsignedString(segment.sector()) + "+" + segment.numSectors()
                        + " lie beyond the capacity of " + capacitySectors + " sectors (5.2.6)");
            }
        }
        return null;
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
