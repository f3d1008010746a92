package io.kickplug.vhost.backend;

import io.kickplug.api.memory.BufferViews;
import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.MemoryLease;
import io.kickplug.api.memory.MemoryRegion;
import java.nio.ByteBuffer;
import java.util.List;

/**
 * Guest memory that marks, in the {@link DirtyLog}, every page a store through it wrote, after the store (the
 * ring writes of the device views and the request's copied bytes and status). Stores made through
 * {@link #views} (zero-copy I/O) land later, when the backend finishes: {@link LoggedQueue} marks those buffers
 * when their chain is pushed. The device runs on this memory only while logging is on; otherwise it gets the plain
 * memory and pays nothing for logging.
 */
final class LoggedMemory implements GuestMemory {

    private final GuestMemory memory;
    private final DirtyLog log;

    LoggedMemory(GuestMemory memory, DirtyLog log) {
        this.memory = memory;
        this.log = log;
    }

    GuestMemory plain() {
        return memory;
    }

    @Override
    public List<MemoryRegion> regions() {
        return memory.regions();
    }

    @Override
    public long totalSize() {
        return memory.totalSize();
    }

    @Override
    public void checkRange(long address, long length) {
        memory.checkRange(address, length);
    }

    @Override
    public boolean isValidRange(long address, long length) {
        return memory.isValidRange(address, length);
    }

    @Override
    public byte readU8(long address) {
        return memory.readU8(address);
    }

    @Override
    public void writeU8(long address, byte value) {
        memory.writeU8(address, value);
        log.mark(address, 1);
    }

    @Override
    public short readU16(long address) {
        return memory.readU16(address);
    }

    @Override
    public short readU16Acquire(long address) {
        return memory.readU16Acquire(address);
    }

    @Override
    public void writeU16(long address, short value) {
        memory.writeU16(address, value);
        log.mark(address, 2);
    }

    @Override
    public void writeU16Release(long address, short value) {
        memory.writeU16Release(address, value);
        log.mark(address, 2);
    }

    @Override
    public int readU32(long address) {
        return memory.readU32(address);
    }

    @Override
    public int readU32Acquire(long address) {
        return memory.readU32Acquire(address);
    }

    @Override
    public void writeU32(long address, int value) {
        memory.writeU32(address, value);
        log.mark(address, 4);
    }

    @Override
    public void writeU32Release(long address, int value) {
        memory.writeU32Release(address, value);
        log.mark(address, 4);
    }

    @Override
    public long readU64(long address) {
        return memory.readU64(address);
    }

    @Override
    public void writeU64(long address, long value) {
        memory.writeU64(address, value);
        log.mark(address, 8);
    }

    @Override
    public void read(long address, byte[] dst, int offset, int length) {
        memory.read(address, dst, offset, length);
    }

    @Override
    public void write(long address, byte[] src, int offset, int length) {
        memory.write(address, src, offset, length);
        log.mark(address, length);
    }

    @Override
    public void read(long address, ByteBuffer dst) {
        memory.read(address, dst);
    }

    @Override
    public void write(long address, ByteBuffer src) {
        int length = src.remaining();
        memory.write(address, src);
        log.mark(address, length);
    }

    @Override
    public void fill(long address, long length, byte value) {
        memory.fill(address, length, value);
        log.mark(address, length);
    }

    @Override
    public ByteBuffer[] views(long address, long length) {
        return memory.views(address, length);
    }

    @Override
    public void viewsInto(long address, long length, BufferViews into) {
        memory.viewsInto(address, length, into);
    }

    @Override
    public void fullFence() {
        memory.fullFence();
    }

    @Override
    public MemoryLease lease() {
        return memory.lease();
    }
}
