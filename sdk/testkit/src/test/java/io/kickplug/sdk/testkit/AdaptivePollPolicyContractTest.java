package io.kickplug.sdk.testkit;

import io.kickplug.poll.AdaptivePollPolicy;

/** The project's adaptive poll policy keeps the kit's poll-policy contract. */
class AdaptivePollPolicyContractTest extends PollPolicyContractTest {

    @Override
    protected PollPolicyContract contract() {
        return PollPolicyContract.of(AdaptivePollPolicy::new);
    }
}
