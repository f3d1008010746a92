package io.kickplug.sdk.testkit;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The contract tests of a backend, for a plugin's own {@code mvn verify}: extend it and return
 * {@code BackendContract.of(new MyBackendFactory())}.
 */
public abstract class BackendContractTest {

    protected abstract BackendContract contract();

    @Property(tries = 10)
    void writtenDataReadsBackAndFlushKeepsIt(@ForAll long seed) {
        contract().checkDataAndFlush(seed);
    }

    @Property(tries = 5)
    void everyOperationCompletesExactlyOnce(@ForAll long seed) {
        contract().checkExactlyOnce(seed);
    }

    @Example
    void beyondTheSizeAndReadOnlyWritesAreRefused() {
        contract().checkRefusals();
    }

    @Example
    void fioVerifyThroughTheRealDevice() {
        contract().checkUnderFio(1);
    }
}
