package io.kickplug.export.nbd;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The exports a server offers, by name, in the order they were made. Thread-safe. */
final class Exports {

    private final Map<String, NbdExport> byName = new LinkedHashMap<>();

    synchronized NbdExport get(String name) {
        return byName.get(name);
    }

    synchronized boolean contains(String name) {
        return byName.containsKey(name);
    }

    synchronized void add(NbdExport e) {
        byName.put(e.name(), e);
    }

    synchronized NbdExport remove(String name) {
        return byName.remove(name);
    }

    synchronized List<NbdExport> all() {
        return new ArrayList<>(byName.values());
    }
}
