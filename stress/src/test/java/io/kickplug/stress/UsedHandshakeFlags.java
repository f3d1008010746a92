package io.kickplug.stress;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZ_Result;

/** VIRTIO 1.2 section 2.7.7, without VIRTIO_F_EVENT_IDX (flags): see {@link Handshake#usedSide}. r1: the device interrupts; r2: the driver finds the used entry itself. */
@JCStressTest
@Description("Section 2.7.7 without VIRTIO_F_EVENT_IDX (flags): a lost notification is r1 = r2 = false")
@Outcome(id = "false, false", expect = Expect.FORBIDDEN, desc = "lost notification: nobody sees the new entry")
@Outcome(id = "true, false", expect = Expect.ACCEPTABLE, desc = "interrupt only")
@Outcome(id = "false, true", expect = Expect.ACCEPTABLE, desc = "found only")
@Outcome(id = "true, true", expect = Expect.ACCEPTABLE, desc = "both (a spurious interrupt)")
@State
public class UsedHandshakeFlags {

    private final Handshake h = Handshake.usedSide(false);

    @Actor
    public void first(ZZ_Result r) {
        r.r1 = h.devicePush();
    }

    @Actor
    public void second(ZZ_Result r) {
        r.r2 = h.driverEnable();
    }
}
