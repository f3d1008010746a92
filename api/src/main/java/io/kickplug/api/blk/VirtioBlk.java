package io.kickplug.api.blk;

/** virtio-blk constants (VIRTIO 1.2 section 5.2). Feature values are masks. */
public interface VirtioBlk {
    // Feature bits (5.2.3).
    long F_SIZE_MAX = 1L << 1;
    long F_SEG_MAX = 1L << 2;
    long F_GEOMETRY = 1L << 4;
    long F_RO = 1L << 5;
    long F_BLK_SIZE = 1L << 6;
    long F_FLUSH = 1L << 9;
    long F_TOPOLOGY = 1L << 10;
    long F_CONFIG_WCE = 1L << 11;
    long F_MQ = 1L << 12;
    long F_DISCARD = 1L << 13;
    long F_WRITE_ZEROES = 1L << 14;
    long F_LIFETIME = 1L << 15;
    long F_SECURE_ERASE = 1L << 16;

    // Request types (5.2.6).
    int T_IN = 0;
    int T_OUT = 1;
    int T_FLUSH = 4;
    int T_GET_ID = 8;
    int T_GET_LIFETIME = 10;
    int T_DISCARD = 11;
    int T_WRITE_ZEROES = 13;
    int T_SECURE_ERASE = 14;

    // Status values (5.2.6).
    int S_OK = 0;
    int S_IOERR = 1;
    int S_UNSUPP = 2;

    /** Sector size of the protocol, whatever the block size (5.2.6). */
    int SECTOR_SIZE = 512;
    /** Bytes of the request header: le32 type, le32 reserved, le64 sector. */
    int HEADER_SIZE = 16;
    /** Bytes of a GET_ID answer. */
    int ID_BYTES = 20;

    // Configuration space offsets (5.2.4).
    int CFG_CAPACITY = 0;
    int CFG_SIZE_MAX = 8;
    int CFG_SEG_MAX = 12;
    int CFG_GEOMETRY = 16;
    int CFG_BLK_SIZE = 20;
    int CFG_PHYSICAL_BLOCK_EXP = 24;
    int CFG_ALIGNMENT_OFFSET = 25;
    int CFG_MIN_IO_SIZE = 26;
    int CFG_OPT_IO_SIZE = 28;
    int CFG_WRITEBACK = 32;
    int CFG_NUM_QUEUES = 34;
    int CFG_MAX_DISCARD_SECTORS = 36;
    int CFG_MAX_DISCARD_SEG = 40;
    int CFG_DISCARD_SECTOR_ALIGNMENT = 44;
    int CFG_MAX_WRITE_ZEROES_SECTORS = 48;
    int CFG_MAX_WRITE_ZEROES_SEG = 52;
    int CFG_WRITE_ZEROES_MAY_UNMAP = 56;
    int CFG_MAX_SECURE_ERASE_SECTORS = 60;
    int CFG_MAX_SECURE_ERASE_SEG = 64;
    int CFG_SECURE_ERASE_SECTOR_ALIGNMENT = 68;
    /** Size of the configuration space Kickplug exposes. */
    int CONFIG_SIZE = 72;
}
