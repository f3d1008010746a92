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
        ModelCosts d = ModelCosts.DEFAULTS;
        assertEquals(d, d.with(null));
        assertEquals(d, d.with(" "));
        ModelCosts c = d.with("trackedSectionNs=800, coScheduleNs=0");
        assertEquals(800, c.trackedSectionNs());
        assertEquals(0, c.coScheduleNs());
        assertEquals(d.coroutineSwitchNs(), c.coroutineSwitchNs());
        assertEquals(d.deviceRequestNs(), c.deviceRequestNs());
        assertEquals(d.futexWaitNs(), c.futexWaitNs());
        assertTrue(ModelCosts.NAMES.contains("spinIterationNs"), "" + ModelCosts.NAMES);
        IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class, () -> d.with("lockNs=1"));
        assertTrue(unknown.getMessage().contains("trackedSectionNs"), unknown.getMessage());
        assertThrows(IllegalArgumentException.class, () -> d.with("trackedSectionNs=fast"));
        assertThrows(IllegalArgumentException.class, () -> d.with("trackedSectionNs=-1"), "negative costs refused");
        assertSame(ModelCosts.class, c.getClass());
    }
}
