package io.kickplug.api.blk;

import java.io.IOException;
import org.osgi.annotation.versioning.ConsumerType;

/** Service that opens one kind of backend; registered with the property {@code backend.kind}. */
@ConsumerType
public interface BackendFactory {

    String PROPERTY_KIND = "backend.kind";

    String kind();

    /**
     * @throws DiskException for a spec this backend cannot open (the message says why)
     */
    BlockBackend open(BackendSpec spec) throws IOException;
}
