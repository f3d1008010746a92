package io.kickplug.api.iothread;

import org.osgi.annotation.versioning.ProviderType;

/** Service that starts I/O threads. */
@ProviderType
public interface IoThreadFactory {

    IoThread start(String name);
}
