package io.kickplug.virtio.ds;

import io.kickplug.api.iothread.IoThread;
import io.kickplug.api.iothread.IoThreadFactory;
import io.kickplug.virtio.iothread.EventLoopThread;
import org.osgi.service.component.annotations.Component;

/** Event-loop I/O threads. */
@Component(service = IoThreadFactory.class)
public final class IoThreadFactoryComponent implements IoThreadFactory {

    @Override
    public IoThread start(String name) {
        return new EventLoopThread(name);
    }
}
