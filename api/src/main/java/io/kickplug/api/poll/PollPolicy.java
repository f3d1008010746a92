package io.kickplug.api.poll;

import org.osgi.annotation.versioning.ConsumerType;

/**
 * Service that sizes poll windows: how long an I/O thread busy-polls a source before it blocks. Registered
 * with the {@value #PROPERTY} property; devices bind it dynamically, so stopping the providing bundle turns
 * polling off and starting it turns polling back on.
 */
@ConsumerType
public interface PollPolicy {

    /** Service property naming the policy, e.g. {@code adaptive}. */
    String PROPERTY = "poll.policy";

    /** The policy disks use. */
    String ADAPTIVE = "adaptive";

    /** A fresh window for one polled source, starting at 0 ns (no polling until a wait shows it pays). */
    PollWindow newWindow(PollParams params);
}
