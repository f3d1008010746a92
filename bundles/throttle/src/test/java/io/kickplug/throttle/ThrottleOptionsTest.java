package io.kickplug.throttle;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.command.OptionTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * kp:throttle's option table (the command reference's source) is what the parser knows: every limit in it, by its
 * name or alias, sets its bucket; a documented default changes nothing; a name not in it is refused.
 */
class ThrottleOptionsTest {

    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final Throttles throttles = new Throttles(() -> 0L, timer);

    @AfterEach
    void stop() {
        timer.shutdownNow();
    }

    /** ThrottleControl (QMP's throttle nodes): the disk joins the group, whose limits become exactly those given. */
    @Test
    void controlPutsTheDiskIntoTheGroupWithExactlyTheseLimits() {
        throttles.configure("d0", List.of("--iops-read", "50"));
        throttles.configure("d0", Throttles.arguments("g0", Map.of("iops-total", 1000L, "bps-write-max", 0L)));
        String text = throttles.describe("d0");
        assertTrue(text.contains("throttle group g0, limits iops-total=1000"), text);
        assertTrue(!text.contains("iops-read"), "the other limits are cleared: " + text);
        throttles.configure("d0", Throttles.arguments("d0", Map.of()));
        assertTrue(throttles.describe("d0").contains("throttle group d0, limits none"), throttles.describe("d0"));
        assertThrows(IllegalArgumentException.class,
                () -> throttles.configure("d0", Throttles.arguments("g0", Map.of("iops-size", 4096L))));
    }

    @Test
    void everyLimitNameAndAliasSetsItsBucket() {
        for (OptionTable.Option o : ThrottleLimits.OPTIONS) {
            String canonical = o.name().substring(2);
            // what the limit needs first: a burst needs the average, a burst length needs the burst
            String base = canonical.replaceFirst("-max(-length)?$", "");
            for (String name : o.names()) {
                List<String> args = new ArrayList<>();
                if (!canonical.equals(base)) {
                    args.addAll(List.of("--" + base, "100"));
                }
                if (canonical.endsWith("-max-length")) {
                    args.addAll(List.of("--" + base + "-max", "200"));
                }
                args.addAll(List.of("--clear", name, canonical.endsWith("-length") ? "3" : canonical.endsWith("-max")
                        ? "200" : "100"));
                String text = throttles.configure("d0", args);
                String expected = canonical + "=" + (canonical.endsWith("-length") ? 3 : canonical.endsWith("-max")
                        ? 200 : 100);
                assertTrue(text.contains(expected), name + ": " + text);
            }
        }
    }

    @Test
    void theDocumentedDefaultsChangeNothing() {
        Map<String, String> defaults = new java.util.LinkedHashMap<>();
        for (OptionTable.Option o : ThrottleLimits.OPTIONS) {
            defaults.put(o.name().substring(2), o.defaultValue());
        }
        assertEquals(ThrottleLimits.NONE.describe(), ThrottleLimits.NONE.with(defaults).describe());
        assertTrue(throttles.configure("d0", List.of()).contains("throttle group d0"), "--group: the disk's name");
    }

    @Test
    void theTableIsTheCommandsAndRefusesOthers() {
        assertSame(Throttles.OPTIONS, ThrottleComponent.OPTIONS);
        assertEquals(20, Throttles.OPTIONS.options().size(), "--group, --clear and 6 buckets x 3");
        assertTrue(Throttles.OPTIONS.flags().contains("--clear"));
        assertTrue(assertThrows(IllegalArgumentException.class, () -> throttles.configure("d0", List.of("--iopz",
                "5"))).getMessage().startsWith("unknown limit 'iopz'"));
    }
}
