package io.kickplug.examples.error;

import io.kickplug.api.blk.BackendFilter;
import io.kickplug.api.blk.DiskManager;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * The {@code error} filter as a service (the disk manager puts every disk behind it; it injects nothing until
 * {@code error:config} sets a rate) and the {@code error:config} command. The settings are kept in the disk's
 * configuration ({@link DiskManager#keepSettings}, prefix {@value DiskSettingsStore#PREFIX}), so they outlive this
 * bundle; stopping the bundle takes the filter out of every disk (no reset) and the disks serve again.
 */
@Component(service = {BackendFilter.class, ErrorComponent.class}, property = {
    BackendFilter.PROPERTY_NAME + "=" + ErrorFilter.NAME,
    "osgi.command.scope=error",
    "osgi.command.function=config"})
public final class ErrorComponent extends ErrorFilter {

    @Reference(name = "diskManager", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile DiskManager diskManager;
    @Reference(name = "configurationAdmin", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC)
    private volatile ConfigurationAdmin configAdmin;

    private final DiskSettingsStore store;

    public ErrorComponent() {
        this(new DiskSettingsStore());
    }

    private ErrorComponent(DiskSettingsStore store) {
        super(store::settings);
        this.store = store;
        store.bind(() -> diskManager, () -> configAdmin);
    }

    /**
     * error:config [DISK [clear] [KEY=VALUE]...]: keys as nbdkit-error-filter(1): error=EIO|ENOSPC|...,
     * error-rate=1%, error-file=/path, and each per kind (error-pwrite-rate=10%, ...); an empty value removes a key.
     */
    @Descriptor("show or change a disk's injected errors (nbdkit's error filter: error, error-rate, error-file, "
            + "each also per operation: error-pread-rate, error-pwrite-rate, error-trim-rate, error-zero-rate, "
            + "error-flush-rate, ...)")
    public String config(@Descriptor("[DISK [clear] [KEY=VALUE]...]") String... args) {
        if (args.length == 0) {
            Map<String, ErrorSettings> all = store.all();
            return all.isEmpty() ? "no disk injects errors"
                    : all.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                            .collect(Collectors.joining("\n"));
        }
        Map<String, String> changes = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            if (args[i].equals("clear")) {
                store.settings(args[0]).asMap().keySet().forEach(k -> changes.put(k, ""));
                continue;
            }
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected KEY=VALUE or clear, not " + args[i]);
            }
            changes.put(args[i].substring(0, eq), args[i].substring(eq + 1));
        }
        ErrorSettings s = changes.isEmpty() ? store.settings(args[0]) : store.change(args[0], changes);
        return args[0] + ": " + s + "; injected " + stats(args[0]);
    }
}
