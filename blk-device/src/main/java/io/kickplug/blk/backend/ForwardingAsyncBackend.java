package io.kickplug.blk.backend;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import java.io.IOException;

/**
 * An asynchronous backend that passes everything on to another; subclasses override what they change. The
 * synchronous questions (kind, size, read-only, discard, write-zeroes, resize) go on as {@link SyncBackends}'
 * views pass them.
 */
public abstract class ForwardingAsyncBackend extends SyncBackends.Delegating {

    /** Where requests and questions go. */
    protected final AsyncBlockBackend view;

    protected ForwardingAsyncBackend(AsyncBlockBackend view) {
        super(view);
        this.view = view;
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
    public boolean supportsFua() {
        return view.supportsFua();
    }

    @Override
    public void close() throws IOException {
        view.close();
    }
}
