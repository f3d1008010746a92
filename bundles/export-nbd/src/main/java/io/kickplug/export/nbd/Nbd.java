package io.kickplug.export.nbd;

/**
 * Constants of the NBD protocol as the NBD project's {@code doc/proto.md} names them, server side. All integers on
 * the wire are big-endian ("Conventions").
 */
final class Nbd {

    private Nbd() {
    }

    /** The IANA port of newstyle negotiation ("Newstyle negotiation"). */
    static final int DEFAULT_PORT = 10809;

    // Handshake ("Newstyle negotiation", "Fixed newstyle negotiation").
    static final long NBDMAGIC = 0x4e42444d41474943L; // "NBDMAGIC"
    static final long IHAVEOPT = 0x49484156454F5054L; // "IHAVEOPT"
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;
    // "Handshake flags"
    static final int FLAG_FIXED_NEWSTYLE = 1;
    static final int FLAG_NO_ZEROES = 1 << 1;
    // "Client flags"
    static final int FLAG_C_FIXED_NEWSTYLE = 1;
    static final int FLAG_C_NO_ZEROES = 1 << 1;

    // "Option types".
    static final int OPT_EXPORT_NAME = 1;
    static final int OPT_ABORT = 2;
    static final int OPT_LIST = 3;
    static final int OPT_STARTTLS = 5;
    static final int OPT_INFO = 6;
    static final int OPT_GO = 7;
    static final int OPT_STRUCTURED_REPLY = 8;

    // "Option reply types"; errors have bit 31 set.
    static final int REP_ACK = 1;
    static final int REP_SERVER = 2;
    static final int REP_INFO = 3;
    static final int REP_FLAG_ERROR = 1 << 31;
    static final int REP_ERR_UNSUP = REP_FLAG_ERROR | 1;
    static final int REP_ERR_POLICY = REP_FLAG_ERROR | 2;
    static final int REP_ERR_INVALID = REP_FLAG_ERROR | 3;
    static final int REP_ERR_UNKNOWN = REP_FLAG_ERROR | 6;
    static final int REP_ERR_SHUTDOWN = REP_FLAG_ERROR | 7;

    // NBD_REP_INFO types.
    static final int INFO_EXPORT = 0;
    static final int INFO_NAME = 1;
    static final int INFO_BLOCK_SIZE = 3;

    // "Transmission flags".
    static final int FLAG_HAS_FLAGS = 1;
    static final int FLAG_READ_ONLY = 1 << 1;
    static final int FLAG_SEND_FLUSH = 1 << 2;
    static final int FLAG_SEND_FUA = 1 << 3;
    static final int FLAG_SEND_TRIM = 1 << 5;
    static final int FLAG_SEND_WRITE_ZEROES = 1 << 6;
    static final int FLAG_CAN_MULTI_CONN = 1 << 8;

    // "Request message", "Request types".
    static final int REQUEST_MAGIC = 0x25609513;
    static final int REQUEST_BYTES = 28;
    static final int CMD_READ = 0;
    static final int CMD_WRITE = 1;
    static final int CMD_DISC = 2;
    static final int CMD_FLUSH = 3;
    static final int CMD_TRIM = 4;
    static final int CMD_WRITE_ZEROES = 6;
    // "Command flags".
    static final int CMD_FLAG_FUA = 1;
    static final int CMD_FLAG_NO_HOLE = 1 << 1;

    // "Simple reply message", "Structured reply chunk message", "Structured reply types".
    static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int SIMPLE_REPLY_BYTES = 16;
    static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;
    static final int STRUCTURED_REPLY_BYTES = 20;
    static final int REPLY_FLAG_DONE = 1;
    static final int REPLY_TYPE_NONE = 0;
    static final int REPLY_TYPE_OFFSET_DATA = 1;
    static final int REPLY_TYPE_ERROR = (1 << 15) | 1;
    static final int REPLY_TYPE_ERROR_OFFSET = (1 << 15) | 2;

    // "Error values".
    static final int EPERM = 1;
    static final int EIO = 5;
    static final int EINVAL = 22;
    static final int ENOSPC = 28;
    static final int EOVERFLOW = 75;
    static final int ESHUTDOWN = 108;

    /** "Size constraints": the minimum block size Kickplug advertises and enforces (a disk's logical block). */
    static final int MIN_BLOCK = 512;
    /** "Size constraints": the preferred block size (the disks' 4 KiB physical blocks). */
    static final int PREFERRED_BLOCK = 4096;
    /**
     * "Size constraints": the maximum payload, 2^25 bytes; a client's payload up to that "SHOULD NOT be considered a
     * denial of service attack", so it is also the most a WRITE may carry here.
     */
    static final int MAX_PAYLOAD = 32 << 20;
    /** Conventions: a string "MUST be no longer than 4096 bytes" (export names, error messages). */
    static final int MAX_STRING = 4096;

    /** The name of an error value. */
    static String errno(int error) {
        return switch (error) {
            case 0 -> "OK";
            case EPERM -> "EPERM";
            case EIO -> "EIO";
            case 12 -> "ENOMEM";
            case EINVAL -> "EINVAL";
            case ENOSPC -> "ENOSPC";
            case EOVERFLOW -> "EOVERFLOW";
            case 95 -> "ENOTSUP";
            case ESHUTDOWN -> "ESHUTDOWN";
            default -> "error " + Integer.toUnsignedString(error);
        };
    }

    /** The name of a command type. */
    static String command(int type) {
        return switch (type) {
            case CMD_READ -> "READ";
            case CMD_WRITE -> "WRITE";
            case CMD_DISC -> "DISC";
            case CMD_FLUSH -> "FLUSH";
            case CMD_TRIM -> "TRIM";
            case 5 -> "CACHE";
            case CMD_WRITE_ZEROES -> "WRITE_ZEROES";
            case 7 -> "BLOCK_STATUS";
            default -> "command " + type;
        };
    }
}
