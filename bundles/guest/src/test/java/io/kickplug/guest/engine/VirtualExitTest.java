package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

/**
 * ioeventfd off in virtual time: an interrupt a device handler raises inside a vCPU's exit reaches the vCPUs when
 * that exit ends (the VMM's big lock is held for the whole exit, and the completion side needs it), in the order
 * raised; outside an exit it is not held.
 */
class VirtualExitTest {

    @Test
    void anInterruptRaisedInsideAnExitIsDeliveredWhenTheExitEnds() {
        VirtualTime time = new VirtualTime(1, Charging.MODEL, ModelCosts.DEFAULTS, false);
        List<String> log = new CopyOnWriteArrayList<>();
        VirtualTimeRuns.onOneIoThread(time, () -> {
            VirtualTime.Actor me = time.current();
            log.add("held outside an exit: " + time.holdUntilExitEnds(() -> log.add("never")));
            me.inExit = true;
            log.add("held: " + time.holdUntilExitEnds(() -> log.add("irq 1")));
            log.add("held: " + time.holdUntilExitEnds(() -> log.add("irq 2")));
            log.add("handler done");
            time.endExit(me);
            log.add("resumed, in exit: " + me.inExit);
            log.add("held after the exit: " + time.holdUntilExitEnds(() -> log.add("never")));
        });
        assertEquals(List.of("held outside an exit: false", "held: true", "held: true", "handler done", "irq 1",
                "irq 2", "resumed, in exit: false", "held after the exit: false"), log);
        assertFalse(time.holdUntilExitEnds(() -> log.add("never")), "a thread outside virtual time holds nothing");
    }
}
