package io.kickplug.stress;

import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressMeta;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.State;
import org.openjdk.jcstress.infra.results.ZZ_Result;

/**
 * The four jcstress tests of the notification handshakes (see {@link Handshake}): each side of VIRTIO 1.2 sections
 * 2.7.10 (avail side: r1 the driver kicks, r2 the device finds the chain itself) and 2.7.7 (used side: r1 the device
 * interrupts, r2 the driver finds the used entry itself), with and without VIRTIO_F_EVENT_IDX. A lost notification
 * is r1 = r2 = false. The outcomes are the same for all four, declared once here ({@link JCStressMeta}).
 */
@Outcome(id = "false, false", expect = Expect.FORBIDDEN, desc = "lost notification: nobody sees the new entry")
@Outcome(id = "true, false", expect = Expect.ACCEPTABLE, desc = "notified only (the kick or the interrupt)")
@Outcome(id = "false, true", expect = Expect.ACCEPTABLE, desc = "found only")
@Outcome(id = "true, true", expect = Expect.ACCEPTABLE, desc = "both (a spurious notification)")
public final class HandshakeRaces {

    private HandshakeRaces() {
    }

    @JCStressTest
    @JCStressMeta(HandshakeRaces.class)
    @Description("Section 2.7.10 with VIRTIO_F_EVENT_IDX: a lost notification is r1 = r2 = false")
    @State
    public static class AvailEventIdx {
        private final Handshake h = Handshake.availSide(true);

        @Actor
        public void driver(ZZ_Result r) {
            r.r1 = h.driverPublish();
        }

        @Actor
        public void device(ZZ_Result r) {
            r.r2 = h.deviceEnable();
        }
    }

    @JCStressTest
    @JCStressMeta(HandshakeRaces.class)
    @Description("Section 2.7.10 without VIRTIO_F_EVENT_IDX (flags): a lost notification is r1 = r2 = false")
    @State
    public static class AvailFlags {
        private final Handshake h = Handshake.availSide(false);

        @Actor
        public void driver(ZZ_Result r) {
            r.r1 = h.driverPublish();
        }

        @Actor
        public void device(ZZ_Result r) {
            r.r2 = h.deviceEnable();
        }
    }

    @JCStressTest
    @JCStressMeta(HandshakeRaces.class)
    @Description("Section 2.7.7 with VIRTIO_F_EVENT_IDX: a lost notification is r1 = r2 = false")
    @State
    public static class UsedEventIdx {
        private final Handshake h = Handshake.usedSide(true);

        @Actor
        public void device(ZZ_Result r) {
            r.r1 = h.devicePush();
        }

        @Actor
        public void driver(ZZ_Result r) {
            r.r2 = h.driverEnable();
        }
    }

    @JCStressTest
    @JCStressMeta(HandshakeRaces.class)
    @Description("Section 2.7.7 without VIRTIO_F_EVENT_IDX (flags): a lost notification is r1 = r2 = false")
    @State
    public static class UsedFlags {
        private final Handshake h = Handshake.usedSide(false);

        @Actor
        public void device(ZZ_Result r) {
            r.r1 = h.devicePush();
        }

        @Actor
        public void driver(ZZ_Result r) {
            r.r2 = h.driverEnable();
        }
    }
}
