package io.kickplug.sdk.testkit;

import io.kickplug.batching.BottomHalfNotifier;

/** The built-in bh strategy keeps the contract the kit checks (the kit checks what the project's strategies do). */
class BottomHalfContractTest extends StrategyContractTest {

    @Override
    protected StrategyContract contract() {
        return StrategyContract.of(BottomHalfNotifier.NAME, BottomHalfNotifier::new);
    }
}
