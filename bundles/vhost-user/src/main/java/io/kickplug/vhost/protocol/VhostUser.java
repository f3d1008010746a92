package io.kickplug.vhost.protocol;

/**
 * Constants of QEMU's vhost-user protocol (docs/interop/vhost-user.rst): request codes, header flags,
 * protocol feature bits and payload sizes. All integers on the wire are little-endian (x86 host order).
 */
public final class VhostUser {

    private VhostUser() {
    }

    /** Header: u32 request, u32 flags, u32 size. */
    public static final int HEADER_SIZE = 12;
    /** Protocol version in flags bits 0-1. */
    public static final int VERSION = 0x1;
    public static final int VERSION_MASK = 0x3;
    /** Flags bit 2: this message is a reply. */
    public static final int FLAG_REPLY = 0x4;
    /** Flags bit 3: the front-end wants a REPLY_ACK answer. */
    public static final int FLAG_NEED_REPLY = 0x8;
    /** Largest payload accepted; a bigger size in a header means the stream is out of step. */
    public static final int MAX_PAYLOAD = 4096;

    // Front-end requests.
    public static final int GET_FEATURES = 1;
    public static final int SET_FEATURES = 2;
    public static final int SET_OWNER = 3;
    public static final int RESET_OWNER = 4;
    public static final int SET_MEM_TABLE = 5;
    public static final int SET_LOG_BASE = 6;
    public static final int SET_LOG_FD = 7;
    public static final int SET_VRING_NUM = 8;
    public static final int SET_VRING_ADDR = 9;
    public static final int SET_VRING_BASE = 10;
    public static final int GET_VRING_BASE = 11;
    public static final int SET_VRING_KICK = 12;
    public static final int SET_VRING_CALL = 13;
    public static final int SET_VRING_ERR = 14;
    public static final int GET_PROTOCOL_FEATURES = 15;
    public static final int SET_PROTOCOL_FEATURES = 16;
    public static final int GET_QUEUE_NUM = 17;
    public static final int SET_VRING_ENABLE = 18;
    public static final int SEND_RARP = 19;
    public static final int NET_SET_MTU = 20;
    public static final int SET_BACKEND_REQ_FD = 21;
    public static final int IOTLB_MSG = 22;
    public static final int SET_VRING_ENDIAN = 23;
    public static final int GET_CONFIG = 24;
    public static final int SET_CONFIG = 25;
    public static final int GET_INFLIGHT_FD = 31;
    public static final int SET_INFLIGHT_FD = 32;
    public static final int RESET_DEVICE = 34;
    public static final int GET_MAX_MEM_SLOTS = 36;
    public static final int ADD_MEM_REG = 37;
    public static final int REM_MEM_REG = 38;

    // Back-end requests, sent on the channel of SET_BACKEND_REQ_FD (vhost-user.rst "Back-end message types").
    public static final int BACKEND_IOTLB_MSG = 1;
    public static final int BACKEND_CONFIG_CHANGE_MSG = 2;
    public static final int BACKEND_VRING_HOST_NOTIFIER_MSG = 3;

    /** VHOST_USER_F_PROTOCOL_FEATURES, a virtio feature bit only vhost-user knows (bit 30). */
    public static final long F_PROTOCOL_FEATURES = 1L << 30;
    /** VHOST_F_LOG_ALL (bit 26): the back-end logs every write to guest memory (vhost-user.rst "Migration"). */
    public static final long F_LOG_ALL = 1L << 26;
    /** SET_VRING_ADDR flags bit 0, VHOST_VRING_F_LOG: log the used ring's writes at log_guest_addr. */
    public static final int VRING_F_LOG = 1;
    /** SET_LOG_BASE payload: u64 mmap_size, u64 mmap_offset (VhostUserLog). */
    public static final int LOG_PAYLOAD_SIZE = 16;

    // Protocol feature bits.
    public static final long PROTOCOL_F_MQ = 1L;
    public static final long PROTOCOL_F_LOG_SHMFD = 1L << 1;
    public static final long PROTOCOL_F_REPLY_ACK = 1L << 3;
    public static final long PROTOCOL_F_BACKEND_REQ = 1L << 5;
    public static final long PROTOCOL_F_CONFIG = 1L << 9;
    public static final long PROTOCOL_F_INFLIGHT_SHMFD = 1L << 12;
    public static final long PROTOCOL_F_RESET_DEVICE = 1L << 13;
    public static final long PROTOCOL_F_CONFIGURE_MEM_SLOTS = 1L << 15;

    /** SET_VRING_KICK/CALL/ERR payload: bits 0-7 queue index, bit 8 "no file descriptor". */
    public static final long VRING_IDX_MASK = 0xff;
    public static final long VRING_NOFD_MASK = 0x100;

    /** SET_MEM_TABLE carries at most this many regions (VHOST_MEMORY_BASELINE_NREGIONS). */
    public static final int MEM_TABLE_MAX_REGIONS = 8;
    /** One memory region: guest address, size, user address, mmap offset. */
    public static final int REGION_SIZE = 32;
    /** GET_CONFIG / SET_CONFIG header: offset, size, flags. */
    public static final int CONFIG_HEADER_SIZE = 12;
    /** Largest configuration space (VHOST_USER_MAX_CONFIG_SIZE). */
    public static final int MAX_CONFIG_SIZE = 256;

    /** The request's name as the specification spells it, or "UNKNOWN(n)". */
    public static String name(int request) {
        return switch (request) {
            case GET_FEATURES -> "GET_FEATURES";
            case SET_FEATURES -> "SET_FEATURES";
            case SET_OWNER -> "SET_OWNER";
            case RESET_OWNER -> "RESET_OWNER";
            case SET_MEM_TABLE -> "SET_MEM_TABLE";
            case SET_LOG_BASE -> "SET_LOG_BASE";
            case SET_LOG_FD -> "SET_LOG_FD";
            case SET_VRING_NUM -> "SET_VRING_NUM";
            case SET_VRING_ADDR -> "SET_VRING_ADDR";
            case SET_VRING_BASE -> "SET_VRING_BASE";
            case GET_VRING_BASE -> "GET_VRING_BASE";
            case SET_VRING_KICK -> "SET_VRING_KICK";
            case SET_VRING_CALL -> "SET_VRING_CALL";
            case SET_VRING_ERR -> "SET_VRING_ERR";
            case GET_PROTOCOL_FEATURES -> "GET_PROTOCOL_FEATURES";
            case SET_PROTOCOL_FEATURES -> "SET_PROTOCOL_FEATURES";
            case GET_QUEUE_NUM -> "GET_QUEUE_NUM";
            case SET_VRING_ENABLE -> "SET_VRING_ENABLE";
            case SEND_RARP -> "SEND_RARP";
            case NET_SET_MTU -> "NET_SET_MTU";
            case SET_BACKEND_REQ_FD -> "SET_BACKEND_REQ_FD";
            case IOTLB_MSG -> "IOTLB_MSG";
            case SET_VRING_ENDIAN -> "SET_VRING_ENDIAN";
            case GET_CONFIG -> "GET_CONFIG";
            case SET_CONFIG -> "SET_CONFIG";
            case GET_INFLIGHT_FD -> "GET_INFLIGHT_FD";
            case SET_INFLIGHT_FD -> "SET_INFLIGHT_FD";
            case RESET_DEVICE -> "RESET_DEVICE";
            case GET_MAX_MEM_SLOTS -> "GET_MAX_MEM_SLOTS";
            case ADD_MEM_REG -> "ADD_MEM_REG";
            case REM_MEM_REG -> "REM_MEM_REG";
            default -> "UNKNOWN(" + request + ")";
        };
    }
}
