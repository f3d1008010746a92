package io.kickplug.blk.backend;

import io.kickplug.api.blk.BackendFactory;
import io.kickplug.api.blk.BackendSpec;
import io.kickplug.api.blk.BlockBackend;
import java.nio.channels.FileChannel;
import java.util.concurrent.atomic.AtomicReference;

/**
 * A "file" backend factory for tests outside this package whose images sit behind a {@link CountingChannel}:
 * {@link #stable()} is what the image holds as of its last fdatasync, so a test can tell a FLUSH that reached
 * the disk from one that did nothing. One image at a time.
 */
public final class StableStorageFiles implements BackendFactory {

    private final AtomicReference<CountingChannel> channel = new AtomicReference<>();

    @Override
    public String kind() {
        return "file";
    }

    @Override
    public BlockBackend open(BackendSpec spec) {
        return FileBackend.open(spec, (path, options) -> {
            CountingChannel c = new CountingChannel(FileChannel.open(path, options));
            channel.set(c);
            return c;
        });
    }

    /** fdatasync calls (force without metadata) on the open image. */
    public int dataForces() {
        return channel.get().dataForces.get();
    }

    /** The image's content as of its last force: what a power loss would leave. */
    public byte[] stable() {
        return channel.get().stable();
    }
}
