package io.kickplug.sdk.testkit;

/** A plugin broke a {@link Rule}: the message names the rule, its section and what happened. */
public final class ContractViolation extends AssertionError {

    private static final long serialVersionUID = 1L;

    private final Rule rule;

    public ContractViolation(Rule rule, String what) {
        super("contract rule " + rule + " broken (" + rule.section() + "): " + rule.text() + "; " + what);
        this.rule = rule;
    }

    public Rule rule() {
        return rule;
    }

    /** Throws a violation of {@code rule} unless {@code holds}. */
    public static void check(boolean holds, Rule rule, String what) {
        if (!holds) {
            throw new ContractViolation(rule, what);
        }
    }
}
