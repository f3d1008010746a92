package io.kickplug.sdk.testkit;

import io.kickplug.api.blk.AsyncBlockBackend;
import io.kickplug.api.blk.BackendFilter;

/** The simplest filter, which returns the backend as it is, keeps the kit's filter contract. */
class PassThroughFilterContractTest extends FilterContractTest {

    @Override
    protected FilterContract contract() {
        return FilterContract.of(() -> new BackendFilter() {
            @Override
            public String name() {
                return "pass";
            }

            @Override
            public AsyncBlockBackend wrap(String disk, AsyncBlockBackend backend) {
                return backend;
            }
        });
    }
}
