package io.kickplug.blk.backend;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import io.kickplug.api.blk.BlockBackend;
import io.kickplug.api.blk.DelegatingAsyncBackend;
import io.kickplug.api.blk.ForwardingAsyncBackend;
import java.io.IOException;

/**
 * Puts a synchronous {@link BlockBackend} behind the asynchronous contract the device uses: a non-blocking one
 * (memory, null) runs inline in {@link AsyncBlockBackend#submit} on the I/O thread, a blocking one (file, null
 * with a latency) on a {@link WorkerPoolBackend}, which runs a page-cache file's small operations inline while they
 * are fast and the pool is idle. An {@link AsyncBlockBackend} is returned as it is.
 */
public final class SyncBackends {

    private SyncBackends() {
    }

    /**
     * The asynchronous view of {@code backend}. Closing the view releases only what the view made (worker
     * threads), never the backend itself, whose owner closes it.
     *
     * @param name the disk's name, for thread names
     * @param workers the most worker threads a blocking backend gets
     */
    public static AsyncBlockBackend async(BlockBackend backend, String name, int workers) {
        if (backend instanceof AsyncBlockBackend) {
            return new Unowned((AsyncBlockBackend) backend);
        }
        if (backend.blocking()) {
            // A page-cache file runs its small operations inline while they stay fast; O_DIRECT always goes to
            // the device, and a null backend's latency is a wait: both always go to the workers.
            boolean inlineWhenFast = backend instanceof FileBackend && !((FileBackend) backend).direct();
            return new WorkerPoolBackend(backend, name, workers, inlineWhenFast, System::nanoTime);
        }
        return new Inline(backend);
    }

    /** Runs one operation synchronously on the calling thread; returns its error or {@code null}. */
    static IOException perform(BlockBackend backend, BackendIo io) {
        try {
            switch (io.op()) {
                case READ:
                    backend.read(io.offset(), io.buffers());
                    break;
                case WRITE:
                    backend.write(io.offset(), io.buffers());
                    if (io.fua()) {
                        backend.flush();
                    }
                    break;
                case FLUSH:
                    backend.flush();
                    break;
                case DISCARD:
                    backend.discard(io.offset(), io.length());
                    break;
                case WRITE_ZEROES:
                    backend.writeZeroes(io.offset(), io.length(), io.mayUnmap());
                    if (io.fua()) {
                        backend.flush();
                    }
                    break;
                default:
                    return new IOException("unknown operation " + io.op());
            }
            return null;
        } catch (IOException e) {
            return e;
        } catch (RuntimeException e) {
            return new IOException(e.toString(), e);
        }
    }

    /** A non-blocking backend: every operation runs and completes inside {@link #submit}. */
    static final class Inline extends DelegatingAsyncBackend {

        Inline(BlockBackend backend) {
            super(backend);
        }

        @Override
        public void submit(BackendIo io) {
            io.complete(perform(backend, io));
        }

        @Override
        public void close() {
            // the view holds nothing; the backend's owner closes it
        }
    }

    /**
     * An asynchronous backend, seen through a view whose close leaves it open. It submits and unplugs from call
     * sites of its own rather than {@link ForwardingAsyncBackend}'s: a filter chain's view of a disk goes through
     * those, and one shared site would see the receiver types of both (megamorphic once disks of several kinds
     * run behind filters).
     */
    static final class Unowned extends ForwardingAsyncBackend {

        Unowned(AsyncBlockBackend backend) {
            super(backend);
        }

        @Override
        public void submit(BackendIo io) {
            view.submit(io);
        }

        @Override
        public void unplug() {
            view.unplug();
        }

        @Override
        public void close() {
            // the backend's owner closes it
        }
    }
}
