package io.kickplug.sdk.testkit;

import io.kickplug.blk.backend.MemoryBackendFactory;

/** The project's memory backend keeps the kit's backend contract. */
class MemoryBackendContractTest extends BackendContractTest {

    @Override
    protected BackendContract contract() {
        return BackendContract.of(new MemoryBackendFactory());
    }
}
