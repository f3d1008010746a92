package io.kickplug.api.blk;

import java.io.IOException;
import org.osgi.annotation.versioning.ConsumerType;

/**
 * An asynchronous backend that passes everything on to another; subclasses override what they change (a
 * {@link BackendFilter}'s wrapper, the device's chain of filters). The synchronous questions go on as
 * {@link DelegatingAsyncBackend} passes them.
 */
@ConsumerType
public abstract class ForwardingAsyncBackend extends DelegatingAsyncBackend {

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
