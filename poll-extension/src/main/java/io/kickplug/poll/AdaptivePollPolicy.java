package io.kickplug.poll;

import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollPolicy;
import io.kickplug.api.poll.PollWindow;
import java.util.Objects;
import org.osgi.service.component.annotations.Component;

/** The {@code adaptive} poll policy: QEMU's grow/shrink windows ({@link AdaptivePollWindow}). */
@Component(service = PollPolicy.class, property = PollPolicy.PROPERTY + "=" + PollPolicy.ADAPTIVE)
public final class AdaptivePollPolicy implements PollPolicy {

    @Override
    public PollWindow newWindow(PollParams params) {
        return new AdaptivePollWindow(Objects.requireNonNull(params, "params"));
    }

    @Override
    public String toString() {
        return "adaptive";
    }
}
