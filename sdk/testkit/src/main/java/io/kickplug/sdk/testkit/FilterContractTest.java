package io.kickplug.sdk.testkit;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The contract tests of a filter, for a plugin's own {@code mvn verify}: extend it and return
 * {@code FilterContract.of(MyFilter::new)}.
 */
public abstract class FilterContractTest {

    protected abstract FilterContract contract();

    @Example
    void fioVerifyThroughTheFilterOnTheRealDevice() {
        contract().checkTransparentUnderFio(1);
    }

    @Example
    void theBackendsErrorsPassThrough() {
        contract().checkPassesErrors();
    }

    @Property(tries = 20)
    void aFlushReachesTheBackendAfterTheWritesBeforeIt(@ForAll long seed) {
        contract().checkFlushOrder(seed);
    }
}
