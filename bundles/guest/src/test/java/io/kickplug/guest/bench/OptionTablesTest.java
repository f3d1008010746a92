package io.kickplug.guest.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.kickplug.api.command.OptionTable;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * The option tables of kp:bench (the command reference's source) and their parsers agree: every option in a table
 * parses, every documented default given explicitly changes nothing, and the parsers refuse what is not in the
 * table with the table's names.
 */
class OptionTablesTest {

    /** Defaults that describe rather than name a value (a file made per run, the environment, the PATH). */
    private static final Set<String> DESCRIBED = Set.of("--json", "--html", "--guest-image", "--qemu");

    @Test
    void kickTakesEveryTableOptionAndItsDefaultIsTheDefault() {
        for (OptionTable.Option o : KickBench.Options.TABLE.options()) {
            assertEquals(KickBench.Options.defaults(), KickBench.Options.parse(List.of(o.name(), o.defaultValue())),
                    o.name() + " " + o.defaultValue());
        }
        assertEquals(KickBench.Options.TABLE.unknown("--iodepth").getMessage(), assertThrows(
                IllegalArgumentException.class, () -> KickBench.Options.parse(List.of("--iodepth", "4"))).getMessage());
        assertEquals(List.of(KickBench.Options.TABLE, SeedsOptions.TABLE, RealGuestOptions.TABLE), BenchCommand.OPTIONS);
    }

    @Test
    void seedsTakeEveryTableOptionAndTheLiteralDefaultsAreTheDefaults() {
        SeedsOptions defaults = SeedsOptions.parse(List.of());
        for (OptionTable.Option o : SeedsOptions.TABLE.options()) {
            if (o.flag()) {
                // a flag changes the run (--quick): taken alone, and not the defaults
                assertNotEquals(defaults, SeedsOptions.parse(List.of(o.name())), o.name());
                continue;
            }
            List<String> args = List.of(o.name(), DESCRIBED.contains(o.name()) ? "out/x" : o.defaultValue());
            SeedsOptions parsed = SeedsOptions.parse(args);
            if (o.name().equals("--runtime")) {
                // Given, the runtime is every seed's (without it a seed under model charging runs 0.1 s a round).
                assertTrue(parsed.runtimeGiven() && !defaults.runtimeGiven(), o.name());
                parsed = new SeedsOptions(parsed.runtimeNanos(), parsed.json(), parsed.clock(), parsed.charging(),
                        parsed.seed(), parsed.html(), parsed.only(), parsed.rounds(), parsed.pin(), parsed.quick(), false);
            }
            if (!DESCRIBED.contains(o.name())) {
                assertEquals(defaults, parsed, o.name() + " " + o.defaultValue());
            }
        }
        assertEquals(SeedsOptions.TABLE.unknown("--iodepth").getMessage(), assertThrows(
                IllegalArgumentException.class, () -> SeedsOptions.parse(List.of("--iodepth", "4"))).getMessage());
    }

    @Test
    void realGuestTakesExactlyTheTableOptionsOutOfTheSeedsArguments() {
        RealGuestOptions defaults = RealGuestOptions.extract(List.of("--real-guest"), Map.of()).realGuest();
        for (OptionTable.Option o : RealGuestOptions.TABLE.options()) {
            List<String> args = new ArrayList<>(List.of("--real-guest-only".equals(o.name()) ? "--real-guest-only"
                    : "--real-guest"));
            if (!o.flag() && !args.contains(o.name())) {
                args.addAll(List.of(o.name(), DESCRIBED.contains(o.name()) ? "/x" : o.defaultValue()));
            }
            args.add("--runtime");
            args.add("1");
            RealGuestOptions.Split split = RealGuestOptions.extract(args, Map.of());
            assertEquals(List.of("--runtime", "1"), split.rest(), o.name() + " is taken out, the rest is left");
            if (!o.flag() && !DESCRIBED.contains(o.name())) {
                assertEquals(defaults, split.realGuest(), o.name() + " " + o.defaultValue());
            }
        }
        assertTrue(RealGuestOptions.TABLE.flags().containsAll(List.of("--real-guest", "--real-guest-only")));
    }
}
