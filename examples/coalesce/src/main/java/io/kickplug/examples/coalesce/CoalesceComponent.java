package io.kickplug.examples.coalesce;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.notify.CompletionNotifier;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import org.apache.felix.service.command.Descriptor;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * The {@code coalesce} strategy as a service (the property {@value CompletionNotifier#PROPERTY} names it, so
 * {@code kp:notify DISK coalesce} finds it and {@code kp:strategies} lists it) and the {@code coalesce:config}
 * command that sets a disk's settings at runtime. The settings are kept in the disk's configuration
 * ({@link DiskManager#keepSettings}, prefix {@value DiskSettingsStore#PREFIX}), so they outlive this bundle.
 */
@Component(service = {CompletionNotifier.class, CoalesceComponent.class}, property = {
    CompletionNotifier.PROPERTY + "=" + CoalescingNotifier.NAME,
    "osgi.command.scope=coalesce",
    "osgi.command.function=config"})
public final class CoalesceComponent extends CoalescingNotifier {

    @Reference(name = "diskManager", cardinality = ReferenceCardinality.OPTIONAL, policy = ReferencePolicy.DYNAMIC)
    private volatile DiskManager diskManager;
    @Reference(name = "configurationAdmin", cardinality = ReferenceCardinality.OPTIONAL,
            policy = ReferencePolicy.DYNAMIC)
    private volatile ConfigurationAdmin configAdmin;

    private final DiskSettingsStore store;

    public CoalesceComponent() {
        this(new DiskSettingsStore());
    }

    private CoalesceComponent(DiskSettingsStore store) {
        super(store::settings, System::nanoTime);
        this.store = store;
        store.bind(() -> diskManager, () -> configAdmin);
    }

    /**
     * coalesce:config [DISK [delay_base_us=N] [iops_threshold=N] [max_delay_us=N]]: without a disk, the settings of
     * the disks that have their own; with one, that disk's settings after the changes (applied at the queues' next
     * stats interval, 10 ms).
     */
    @Descriptor("show or change a disk's interrupt coalescing (SPDK vhost's delay_base_us and iops_threshold)")
    public String config(@Descriptor("[DISK [delay_base_us=N] [iops_threshold=N] [max_delay_us=N]]") String... args) {
        if (args.length == 0) {
            Map<String, CoalesceSettings> all = store.all();
            return all.isEmpty() ? "every disk: " + CoalesceSettings.DEFAULTS
                    : all.entrySet().stream().map(e -> e.getKey() + ": " + e.getValue())
                            .collect(Collectors.joining("\n"));
        }
        Map<String, String> changes = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            int eq = args[i].indexOf('=');
            if (eq <= 0) {
                throw new IllegalArgumentException("expected key=value, not " + args[i]);
            }
            changes.put(args[i].substring(0, eq).replace('-', '_'), args[i].substring(eq + 1));
        }
        CoalesceSettings s = changes.isEmpty() ? store.settings(args[0]) : store.change(args[0], changes);
        return args[0] + ": " + s;
    }

    @Deactivate
    void deactivate() {
        close();
    }
}
