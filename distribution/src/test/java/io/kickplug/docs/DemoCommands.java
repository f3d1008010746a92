package io.kickplug.docs;

import io.kickplug.api.command.OptionTable;
import org.apache.felix.service.command.Descriptor;
import org.apache.felix.service.command.Parameter;

/** Commands as Gogo sees them, for the generator's tests: every kind of declaration the real commands use. */
public final class DemoCommands {

    /** The options of the form that parses its own options. */
    public static final OptionTable OPTIONS = new OptionTable("kick [options]", "the kick benchmark",
            OptionTable.Option.valued("--runtime", "S", "10s", "runtime of each run"),
            OptionTable.Option.valued("--transport", "mmio|pci", "mmio", "the disk's transport"),
            OptionTable.Option.flag("--quick", "fewer points"));

    @Descriptor("attach a disk: more about it")
    public String attach(
            @Descriptor("backend: file or memory")
            @Parameter(names = {"--backend", "-b"}, absentValue = "memory") String backend,
            @Descriptor("refuse writes")
            @Parameter(names = "--readonly", presentValue = "true", absentValue = "false") boolean readOnly,
            @Descriptor("NAME [SIZE]: the disk name and its size") String... nameAndSize) {
        return "";
    }

    @Descriptor("show polling")
    public String poll(@Descriptor("disk name") String disk) {
        return "";
    }

    @Descriptor("turn polling on or off")
    public String poll(@Descriptor("disk name") String disk, @Descriptor("on|off: on or off") String mode) {
        return "";
    }

    /** Object's notify() is no command; this one is. */
    @Descriptor("switch the strategy")
    public String notify(@Descriptor("disk name") String diskName) {
        return "";
    }

    /** A hyphenated command: Gogo passes the function name first. */
    @Descriptor("stop an export")
    public String _main(
            @Descriptor("JSON instead of text")
            @Parameter(names = "--json", presentValue = "true", absentValue = "false") boolean json,
            @Descriptor("DISK: the exported disk") String... operands) {
        return "";
    }

    @Descriptor("run a benchmark")
    public String bench(@Descriptor("BENCHMARK [options]: kick, then its options") String... args) {
        return "";
    }
}
