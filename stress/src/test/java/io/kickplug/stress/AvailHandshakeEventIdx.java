package io.kickplug.stress;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZ_Result;

/** VIRTIO 1.2 section 2.7.10, with VIRTIO_F_EVENT_IDX: see {@link Handshake#availSide}. r1: the driver kicks; r2: the device finds the chain itself. */
@JCStressTest
@Description("Section 2.7.10 with VIRTIO_F_EVENT_IDX: a lost notification is r1 = r2 = false")
@Outcome(id = "false, false", expect = Expect.FORBIDDEN, desc = "lost notification: nobody sees the new entry")
@Outcome(id = "true, false", expect = Expect.ACCEPTABLE, desc = "kick only")
@Outcome(id = "false, true", expect = Expect.ACCEPTABLE, desc = "found only")
@Outcome(id = "true, true", expect = Expect.ACCEPTABLE, desc = "both (a spurious kick)")
@State
public class AvailHandshakeEventIdx {

    private final Handshake h = Handshake.availSide(true);

    @Actor
    public void first(ZZ_Result r) {
        r.r1 = h.driverPublish();
    }

    @Actor
    public void second(ZZ_Result r) {
        r.r2 = h.deviceEnable();
    }
}
