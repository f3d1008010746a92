package io.kickplug.blk.fake;

import io.kickplug.api.virtio.ChainReader;
import io.kickplug.api.virtio.ChainWriter;
import io.kickplug.api.virtio.DescriptorChain;
import java.nio.BufferOverflowException;
import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;

/**
 * A descriptor chain over plain byte arrays, for tests that need no guest memory: each array is one
 * descriptor's buffer. The cursors follow the {@link ChainReader}/{@link ChainWriter} contracts.
 */
public final class FakeChain implements DescriptorChain {

    private final int head;
    private final List<byte[]> readable;
    private final List<byte[]> writable;

    public FakeChain(int head, List<byte[]> readable, List<byte[]> writable) {
        this.head = head;
        this.readable = List.copyOf(readable);
        this.writable = List.copyOf(writable);
    }

    /** A builder that adds buffers in chain order: readable ones first. */
    public static Builder builder() {
        return new Builder();
    }

    /** The device-writable buffers, to inspect what the device wrote. */
    public List<byte[]> writableBuffers() {
        return writable;
    }

    /** The last byte of the last non-empty writable buffer: where the status goes. */
    public int lastWritableByte() {
        for (int i = writable.size() - 1; i >= 0; i--) {
            byte[] buffer = writable.get(i);
            if (buffer.length > 0) {
                return buffer[buffer.length - 1] & 0xFF;
            }
        }
        throw new IllegalStateException("no writable byte");
    }

    /** The writable buffers concatenated. */
    public byte[] writtenContent() {
        return concat(writable);
    }

    @Override
    public int head() {
        return head;
    }

    @Override
    public int bufferCount() {
        return readable.size() + writable.size();
    }

    @Override
    public long readableBytes() {
        return total(readable);
    }

    @Override
    public long writableBytes() {
        return total(writable);
    }

    @Override
    public ChainReader reader() {
        return new Reader(new DiscardSegments(readable), 0, total(readable));
    }

    @Override
    public ChainWriter writer() {
        return new Writer(new DiscardSegments(writable), 0, total(writable));
    }

    private static long total(List<byte[]> buffers) {
        return buffers.stream().mapToLong(b -> b.length).sum();
    }

    private static byte[] concat(List<byte[]> buffers) {
        byte[] all = new byte[(int) total(buffers)];
        int at = 0;
        for (byte[] b : buffers) {
            System.arraycopy(b, 0, all, at, b.length);
            at += b.length;
        }
        return all;
    }

    /** Buffers seen as one byte space. */
    private static final class DiscardSegments {
        final List<byte[]> buffers;

        DiscardSegments(List<byte[]> buffers) {
            this.buffers = buffers;
        }

        byte get(long at) {
            for (byte[] b : buffers) {
                if (at < b.length) {
                    return b[(int) at];
                }
                at -= b.length;
            }
            throw new IndexOutOfBoundsException();
        }

        void put(long at, byte value) {
            for (byte[] b : buffers) {
                if (at < b.length) {
                    b[(int) at] = value;
                    return;
                }
                at -= b.length;
            }
            throw new IndexOutOfBoundsException();
        }

        ByteBuffer[] views(long at, long length) {
            List<ByteBuffer> views = new ArrayList<>();
            for (byte[] b : buffers) {
                if (length == 0) {
                    break;
                }
                if (at >= b.length) {
                    at -= b.length;
                    continue;
                }
                int n = (int) Math.min(length, b.length - at);
                views.add(ByteBuffer.wrap(b, (int) at, n).slice().order(ByteOrder.LITTLE_ENDIAN));
                length -= n;
                at = 0;
            }
            return views.toArray(ByteBuffer[]::new);
        }
    }

    private abstract static class Cursor {
        final DiscardSegments segments;
        final long start;
        long position;
        long end;

        /** What {@link #need} throws: a reader's underflow, a writer's overflow. */
        private final Supplier<RuntimeException> tooShort;

        Cursor(DiscardSegments segments, long start, long end, Supplier<RuntimeException> tooShort) {
            this.segments = segments;
            this.start = start;
            this.position = start;
            this.end = end;
            this.tooShort = tooShort;
        }

        public long remaining() {
            return end - position;
        }

        public long position() {
            return position - start;
        }

        public void skip(long length) {
            need(length);
            position += length;
        }

        public ByteBuffer[] views(long length) {
            need(length);
            ByteBuffer[] views = segments.views(position, length);
            position += length;
            return views;
        }

        long splitPoint(long offset) {
            if (offset < 0 || offset > remaining()) {
                throw new IllegalArgumentException("split at " + offset + " of " + remaining());
            }
            long at = position + offset;
            long oldEnd = end;
            end = at;
            return oldEnd;
        }

        void need(long length) {
            if (length < 0 || length > remaining()) {
                throw tooShort.get();
            }
        }
    }

    private static final class Reader extends Cursor implements ChainReader {
        Reader(DiscardSegments segments, long start, long end) {
            super(segments, start, end, BufferUnderflowException::new);
        }

        @Override
        public void read(byte[] dst, int offset, int length) {
            need(length);
            for (int i = 0; i < length; i++) {
                dst[offset + i] = segments.get(position++);
            }
        }

        @Override
        public int readU32() {
            byte[] b = new byte[4];
            read(b, 0, 4);
            return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getInt();
        }

        @Override
        public long readU64() {
            byte[] b = new byte[8];
            read(b, 0, 8);
            return ByteBuffer.wrap(b).order(ByteOrder.LITTLE_ENDIAN).getLong();
        }

        @Override
        public ChainReader splitAt(long offset) {
            long at = position + offset;
            long oldEnd = splitPoint(offset);
            return new Reader(segments, at, oldEnd);
        }
    }

    private static final class Writer extends Cursor implements ChainWriter {
        Writer(DiscardSegments segments, long start, long end) {
            super(segments, start, end, BufferOverflowException::new);
        }

        @Override
        public void write(byte[] src, int offset, int length) {
            need(length);
            for (int i = 0; i < length; i++) {
                segments.put(position++, src[offset + i]);
            }
        }

        @Override
        public void writeU8(int value) {
            need(1);
            segments.put(position++, (byte) value);
        }

        @Override
        public void writeZeroes(long length) {
            need(length);
            for (long i = 0; i < length; i++) {
                segments.put(position++, (byte) 0);
            }
        }

        @Override
        public ChainWriter splitAt(long offset) {
            long at = position + offset;
            long oldEnd = splitPoint(offset);
            return new Writer(segments, at, oldEnd);
        }
    }

    /** Adds buffers in order; readable ones must come first (section 2.7.5.2). */
    public static final class Builder {
        private final List<byte[]> readable = new ArrayList<>();
        private final List<byte[]> writable = new ArrayList<>();
        private int head;

        public Builder head(int head) {
            this.head = head;
            return this;
        }

        public Builder readable(byte[] buffer) {
            if (!writable.isEmpty()) {
                throw new IllegalStateException("readable buffers come first");
            }
            readable.add(buffer);
            return this;
        }

        public Builder writable(int length) {
            byte[] buffer = new byte[length];
            java.util.Arrays.fill(buffer, (byte) 0xEE);
            writable.add(buffer);
            return this;
        }

        public FakeChain build() {
            return new FakeChain(head, readable, writable);
        }
    }
}
