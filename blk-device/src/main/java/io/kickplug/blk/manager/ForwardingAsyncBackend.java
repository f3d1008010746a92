package io.kickplug.blk.manager;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendIo;
import java.io.IOException;

/** An asynchronous backend that passes everything on to another; subclasses override what they change. */
abstract class ForwardingAsyncBackend implements AsyncBlockBackend {

    /** Where requests and questions go. */
    protected final AsyncBlockBackend view;

    ForwardingAsyncBackend(AsyncBlockBackend view) {
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
    public String kind() {
        return view.kind();
    }

    @Override
    public long size() {
        return view.size();
    }

    @Override
    public boolean readOnly() {
        return view.readOnly();
    }

    @Override
    public boolean supportsDiscard() {
        return view.supportsDiscard();
    }

    @Override
    public boolean supportsWriteZeroes() {
        return view.supportsWriteZeroes();
    }

    @Override
    public void resize(long newSize) throws IOException {
        view.resize(newSize);
    }

    @Override
    public void close() throws IOException {
        view.close();
    }
}
