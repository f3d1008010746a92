package io.kickplug.sdk.testkit;

import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;

/**
 * The contract tests of a poll policy, for a plugin's own {@code mvn verify}: extend it and return
 * {@code PollPolicyContract.of(MyPolicy::new)}.
 */
public abstract class PollPolicyContractTest {

    protected abstract PollPolicyContract contract();

    @Property(tries = 200)
    void theWindowStaysInItsBoundsAndPollingStopsWhenItShould(@ForAll long seed) {
        contract().checkWindow(seed);
    }

    @Example
    void fioVerifyWithTheDevicePollingByIt() {
        contract().checkUnderFio(1);
    }
}
