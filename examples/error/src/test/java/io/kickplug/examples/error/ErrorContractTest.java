package io.kickplug.examples.error;

import io.kickplug.sdk.testkit.FilterContract;
import io.kickplug.sdk.testkit.FilterContractTest;

/**
 * The kit's contract for a filter, with no errors configured (the filter's normal state): fio verify through it on
 * the real device, the backend's errors passed through, FLUSH order kept.
 */
class ErrorContractTest extends FilterContractTest {

    @Override
    protected FilterContract contract() {
        return FilterContract.of(ErrorFilter::new);
    }
}
