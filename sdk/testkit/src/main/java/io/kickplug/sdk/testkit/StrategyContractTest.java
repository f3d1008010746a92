package io.kickplug.sdk.testkit;

import net.jqwik.api.Arbitrary;
import net.jqwik.api.Example;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The contract tests of a notification strategy, for a plugin's own {@code mvn verify}: extend it and return the
 * contract.
 *
 * <pre>{@code
 * class CoalesceContractTest extends StrategyContractTest {
 *     protected StrategyContract contract() {
 *         return StrategyContract.of("coalesce", CoalescingNotifier::new).maxDelay(Duration.ofMillis(2));
 *     }
 * }
 * }</pre>
 *
 * A broken rule fails with a {@link ContractViolation} naming the rule and its VIRTIO section.
 */
public abstract class StrategyContractTest {

    /** The strategy under test, as {@link StrategyContract#of} describes it. */
    protected abstract StrategyContract contract();

    /** One contract (so one strategy object) per test class for all the protocol's tries. */
    private static final java.util.Map<Class<?>, StrategyContract> CONTRACTS =
            new java.util.concurrent.ConcurrentHashMap<>();

    private StrategyContract shared() {
        return CONTRACTS.computeIfAbsent(getClass(), c -> contract());
    }

    @Provide
    Arbitrary<StrategyContract.Script> scripts() {
        return StrategyContract.scripts();
    }

    /** Random batch shapes on two queues of one I/O thread, EVENT_IDX on and off, detached at any point. */
    @Property(tries = 300)
    void noLostAndNoDuplicateNotification(@ForAll("scripts") StrategyContract.Script script) {
        shared().checkProtocol(script);
    }

    @Example
    void everyRequestCompletesUnderFioVerifyWithEventIdx() {
        contract().checkUnderFio(true, 1);
    }

    @Example
    void everyRequestCompletesUnderFioVerifyWithoutEventIdx() {
        contract().checkUnderFio(false, 2);
    }

    @Example
    void swapsToAndFromItUnderFioVerifyLoseNothing() {
        contract().checkSwapUnderFio(3);
    }
}
