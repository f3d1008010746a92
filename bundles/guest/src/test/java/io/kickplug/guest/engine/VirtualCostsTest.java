package io.kickplug.guest.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** The model's costs and how a sensitivity run replaces some of them ({@code -Dkickplug.model.costs}). */
class VirtualCostsTest {

    @Test
    void aSensitivityRunReplacesOnlyTheNamedCosts() {
        VirtualTime.Costs d = VirtualTime.Costs.DEFAULTS;
        assertEquals(d, d.with(null));
        assertEquals(d, d.with(" "));
        VirtualTime.Costs c = d.with("trackedSectionNs=800, coScheduleNs=0");
        assertEquals(800, c.trackedSectionNs());
        assertEquals(0, c.coScheduleNs());
        assertEquals(d.coroutineSwitchNs(), c.coroutineSwitchNs());
        assertEquals(d.deviceRequestNs(), c.deviceRequestNs());
        assertEquals(d.futexWaitNs(), c.futexWaitNs());
        assertTrue(VirtualTime.Costs.NAMES.contains("spinIterationNs"), "" + VirtualTime.Costs.NAMES);
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> d.with("lockNs=1"));
        assertTrue(unknown.getMessage().contains("trackedSectionNs"), unknown.getMessage());
        assertThrows(IllegalArgumentException.class, () -> d.with("trackedSectionNs=fast"));
        assertThrows(IllegalArgumentException.class, () -> d.with("trackedSectionNs=-1"), "negative costs refused");
        assertSame(VirtualTime.Costs.class, c.getClass());
    }
}
