package io.kickplug.vhost.testsupport;

import io.kickplug.api.blk.BlockBackend;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/** A raw image file for tests (the product's file backend lives in blk-device): positional I/O, run inline. */
public final class ImageFileBackend implements BlockBackend {

    private final FileChannel channel;
    private volatile long size;

    /** Creates or truncates {@code path} to {@code size} bytes (sparse). */
    public ImageFileBackend(Path path, long size) throws IOException {
        this.channel = FileChannel.open(path, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE, StandardOpenOption.TRUNCATE_EXISTING);
        this.channel.truncate(size);
        this.channel.write(ByteBuffer.allocate(1), size - 1);
        this.size = size;
    }

    /** Opens the existing image {@code path} as it is (a second export of the same image: nothing truncated). */
    public static ImageFileBackend existing(Path path) throws IOException {
        return new ImageFileBackend(FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE));
    }

    private ImageFileBackend(FileChannel channel) throws IOException {
        this.channel = channel;
        this.size = channel.size();
    }

    @Override
    public String kind() {
        return "file";
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public boolean readOnly() {
        return false;
    }

    @Override
    public boolean blocking() {
        return false;
    }

    @Override
    public void read(long offset, ByteBuffer[] dst) throws IOException {
        long at = offset;
        for (ByteBuffer b : dst) {
            while (b.hasRemaining()) {
                int n = channel.read(b, at);
                if (n < 0) {
                    throw new IOException("read past the end of the image at " + at);
                }
                at += n;
            }
        }
    }

    @Override
    public void write(long offset, ByteBuffer[] src) throws IOException {
        long at = offset;
        for (ByteBuffer b : src) {
            while (b.hasRemaining()) {
                at += channel.write(b, at);
            }
        }
    }

    /** Grows or shrinks the image (kp:resize's backend step; the caller then signals the device). */
    @Override
    public synchronized void resize(long newSize) throws IOException {
        if (newSize < size) {
            channel.truncate(newSize);
        } else if (newSize > size) {
            channel.write(ByteBuffer.allocate(1), newSize - 1);
        }
        size = newSize;
    }

    @Override
    public void flush() throws IOException {
        channel.force(false);
    }

    @Override
    public void close() throws IOException {
        channel.close();
    }
}
