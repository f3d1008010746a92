package io.kickplug.itest;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Names the guest kernel's text addresses in a QEMU monitor dump (registers, disassembly, stack words) from the
 * kernel's System.map, for a guest booted with {@code nokaslr}. Addresses in modules (virtio_blk, virtio_ring)
 * are not in it and stay unnamed.
 */
final class KernelSymbols {

    private static final Pattern ADDRESS = Pattern.compile("\\b(?:0x)?(ffffffff[0-9a-f]{8})\\b");

    private final long[] addresses;
    private final String[] names;

    private KernelSymbols(long[] addresses, String[] names) {
        this.addresses = addresses;
        this.names = names;
    }

    /** {@code dump} followed by one line per distinct kernel text address in it with its symbol; never throws. */
    static String annotate(String dump, Path systemMap) {
        KernelSymbols symbols;
        try {
            symbols = load(systemMap);
        } catch (IOException | RuntimeException e) {
            return dump + "(no kernel symbols: " + e + ")\n";
        }
        Set<String> seen = new LinkedHashSet<>();
        Matcher m = ADDRESS.matcher(dump);
        while (m.find()) {
            seen.add(m.group(1));
        }
        StringBuilder b = new StringBuilder(dump).append("--- kernel symbols (System.map, nokaslr)\n");
        for (String hex : seen) {
            String name = symbols.name(Long.parseUnsignedLong(hex, 16));
            if (name != null) {
                b.append("0x").append(hex).append(" = ").append(name).append('\n');
            }
        }
        return b.toString();
    }

    static KernelSymbols load(Path systemMap) throws IOException {
        List<long[]> entries = new ArrayList<>();
        List<String> labels = new ArrayList<>();
        for (String line : Files.readAllLines(systemMap)) {
            String[] f = line.trim().split("\\s+");
            if (f.length < 3 || !(f[1].equalsIgnoreCase("t") || f[1].equalsIgnoreCase("w"))) {
                continue;
            }
            entries.add(new long[] {Long.parseUnsignedLong(f[0], 16), labels.size()});
            labels.add(f[2]);
        }
        entries.sort((a, b) -> Long.compare(a[0], b[0])); // kernel text: all in one half, signed order
        long[] addresses = new long[entries.size()];
        String[] names = new String[entries.size()];
        for (int i = 0; i < addresses.length; i++) {
            addresses[i] = entries.get(i)[0];
            names[i] = labels.get((int) entries.get(i)[1]);
        }
        return new KernelSymbols(addresses, names);
    }

    /** {@code symbol+0xoffset} of a text address, or {@code null} outside the text (or past 64 KiB from a symbol). */
    String name(long address) {
        int i = Arrays.binarySearch(addresses, address);
        if (i < 0) {
            i = -i - 2;
        }
        if (i < 0 || address - addresses[i] > 0x10000) {
            return null;
        }
        return names[i] + "+0x" + Long.toHexString(address - addresses[i]);
    }
}
