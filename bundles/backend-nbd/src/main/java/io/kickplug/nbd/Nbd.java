package io.kickplug.nbd;

/**
 * Constants of the NBD protocol, as the NBD project's {@code doc/proto.md} names them (fixed newstyle negotiation,
 * transmission, structured replies). All integers on the wire are big-endian.
 */
final class Nbd {

    private Nbd() {
    }

    // Handshake (proto.md "Newstyle negotiation").
    static final long NBDMAGIC = 0x4e42444d41474943L; // "NBDMAGIC"
    static final long IHAVEOPT = 0x49484156454F5054L; // "IHAVEOPT"
    static final long OLDSTYLE_MAGIC = 0x00420281861253L;
    static final long OPTION_REPLY_MAGIC = 0x3e889045565a9L;
    static final int FLAG_FIXED_NEWSTYLE = 1;
    static final int FLAG_NO_ZEROES = 2;
    static final int FLAG_C_FIXED_NEWSTYLE = 1;
    static final int FLAG_C_NO_ZEROES = 2;

    // Options.
    static final int OPT_ABORT = 2;
    static final int OPT_GO = 7;
    static final int OPT_STRUCTURED_REPLY = 8;

    // Option replies; errors have bit 31 set.
    static final int REP_ACK = 1;
    static final int REP_INFO = 3;
    static final int REP_FLAG_ERROR = 1 << 31;
    static final int REP_ERR_UNSUP = REP_FLAG_ERROR | 1;
    static final int REP_ERR_POLICY = REP_FLAG_ERROR | 2;
    static final int REP_ERR_INVALID = REP_FLAG_ERROR | 3;
    static final int REP_ERR_PLATFORM = REP_FLAG_ERROR | 4;
    static final int REP_ERR_TLS_REQD = REP_FLAG_ERROR | 5;
    static final int REP_ERR_UNKNOWN = REP_FLAG_ERROR | 6;
    static final int REP_ERR_SHUTDOWN = REP_FLAG_ERROR | 7;
    static final int REP_ERR_BLOCK_SIZE_REQD = REP_FLAG_ERROR | 8;
    static final int REP_ERR_TOO_BIG = REP_FLAG_ERROR | 9;

    // NBD_OPT_GO information types.
    static final int INFO_EXPORT = 0;
    static final int INFO_BLOCK_SIZE = 3;

    // Transmission flags.
    static final int FLAG_HAS_FLAGS = 1;
    static final int FLAG_READ_ONLY = 1 << 1;
    static final int FLAG_SEND_FLUSH = 1 << 2;
    static final int FLAG_SEND_FUA = 1 << 3;
    static final int FLAG_SEND_TRIM = 1 << 5;
    static final int FLAG_SEND_WRITE_ZEROES = 1 << 6;
    static final int FLAG_CAN_MULTI_CONN = 1 << 8;

    // Transmission: requests.
    static final int REQUEST_MAGIC = 0x25609513;
    static final int REQUEST_BYTES = 28;
    static final int CMD_READ = 0;
    static final int CMD_WRITE = 1;
    static final int CMD_DISC = 2;
    static final int CMD_FLUSH = 3;
    static final int CMD_TRIM = 4;
    static final int CMD_WRITE_ZEROES = 6;
    static final int CMD_FLAG_FUA = 1;
    static final int CMD_FLAG_NO_HOLE = 1 << 1;

    // Transmission: replies.
    static final int SIMPLE_REPLY_MAGIC = 0x67446698;
    static final int STRUCTURED_REPLY_MAGIC = 0x668e33ef;
    static final int REPLY_FLAG_DONE = 1;
    static final int REPLY_TYPE_NONE = 0;
    static final int REPLY_TYPE_OFFSET_DATA = 1;
    static final int REPLY_TYPE_OFFSET_HOLE = 2;
    static final int REPLY_TYPE_ERROR_BIT = 1 << 15;
    static final int REPLY_TYPE_ERROR = REPLY_TYPE_ERROR_BIT | 1;
    static final int REPLY_TYPE_ERROR_OFFSET = REPLY_TYPE_ERROR_BIT | 2;

    /** The payload limit when the server gives none (proto.md: 32 MiB is the de facto maximum). */
    static final int DEFAULT_MAX_PAYLOAD = 32 << 20;

    /** The name of an NBD error value (proto.md "Error values"). */
    static String errno(int error) {
        return switch (error) {
            case 1 -> "EPERM";
            case 5 -> "EIO";
            case 12 -> "ENOMEM";
            case 22 -> "EINVAL";
            case 28 -> "ENOSPC";
            case 75 -> "EOVERFLOW";
            case 95 -> "ENOTSUP";
            case 108 -> "ESHUTDOWN";
            default -> "error " + Integer.toUnsignedString(error);
        };
    }

    /** The name of an option reply error (proto.md "Option reply types"). */
    static String optionError(int type) {
        return switch (type) {
            case REP_ERR_UNSUP -> "NBD_REP_ERR_UNSUP (option not supported)";
            case REP_ERR_POLICY -> "NBD_REP_ERR_POLICY (refused by the server's policy)";
            case REP_ERR_INVALID -> "NBD_REP_ERR_INVALID (invalid request)";
            case REP_ERR_PLATFORM -> "NBD_REP_ERR_PLATFORM (not supported on the server's platform)";
            case REP_ERR_TLS_REQD -> "NBD_REP_ERR_TLS_REQD (the server requires TLS, which Kickplug's NBD client does"
                    + " not support)";
            case REP_ERR_UNKNOWN -> "NBD_REP_ERR_UNKNOWN (no such export)";
            case REP_ERR_SHUTDOWN -> "NBD_REP_ERR_SHUTDOWN (the server is shutting down)";
            case REP_ERR_BLOCK_SIZE_REQD -> "NBD_REP_ERR_BLOCK_SIZE_REQD";
            case REP_ERR_TOO_BIG -> "NBD_REP_ERR_TOO_BIG";
            default -> "option error 0x" + Integer.toHexString(type);
        };
    }
}
