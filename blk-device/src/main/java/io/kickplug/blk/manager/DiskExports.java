package io.kickplug.blk.manager;

import io.kickplug.api.blk.DiskPort;
import io.kickplug.api.virtio.VirtioDevice;
import io.kickplug.blk.device.DevicePort;
import io.kickplug.blk.device.VirtioBlkDevice;
import io.kickplug.blk.notify.NotifierRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@link DiskRegistry} disk hands out beyond its own device: devices exported for out-of-registry
 * transports (vhost-user, {@link DiskRegistry#exportDevice}) and ports for other servers
 * ({@link DiskRegistry#openPort}), per disk, and their closing when the disk goes. Guarded by the registry's
 * monitor ({@code lock}): callers hold it, and a port's close callback takes it.
 */
final class DiskExports {

    /** An exported device and its strategy-change listener. */
    private record Export(VirtioBlkDevice device, NotifierRegistry.Listener listener) {
    }

    private final NotifierRegistry notifiers;
    private final Object lock;
    /** Devices handed out by {@link DiskRegistry#exportDevice}, per disk; reset before the disk's backend closes. */
    private final Map<String, List<Export>> exports = new LinkedHashMap<>();
    /** Ports handed out by {@link DiskRegistry#openPort}, per disk; closed (detached) before all else of the disk. */
    private final Map<String, List<DevicePort>> ports = new LinkedHashMap<>();

    /**
     * @param notifiers where an exported device listens for strategy changes
     * @param lock the registry's monitor, taken when a port reports its close
     */
    DiskExports(NotifierRegistry notifiers, Object lock) {
        this.notifiers = Objects.requireNonNull(notifiers, "notifiers");
        this.lock = Objects.requireNonNull(lock, "lock");
    }

    /** Keeps {@code device} as exported from disk {@code name}; it follows strategy changes from now on. */
    void addDevice(String name, VirtioBlkDevice device) {
        NotifierRegistry.Listener listener = device::strategiesChanged;
        notifiers.addListener(listener);
        exports.computeIfAbsent(name, n -> new ArrayList<>()).add(new Export(device, listener));
    }

    /** The devices exported from disk {@code name}, in export order. */
    List<VirtioBlkDevice> devices(String name) {
        return exports.getOrDefault(name, List.of()).stream().map(Export::device).toList();
    }

    /** The devices exported from every disk. */
    List<VirtioBlkDevice> allDevices() {
        List<VirtioBlkDevice> all = new ArrayList<>();
        for (List<Export> list : exports.values()) {
            for (Export exported : list) {
                all.add(exported.device());
            }
        }
        return all;
    }

    /** Forgets an exported device (its transport reset it) and ends its worker pool. */
    void releaseDevice(String name, VirtioDevice device) {
        List<Export> list = exports.get(name);
        if (list == null) {
            return;
        }
        list.removeIf(e -> {
            if (e.device() == device) {
                notifiers.removeListener(e.listener());
                e.device().close();
                return true;
            }
            return false;
        });
        if (list.isEmpty()) {
            exports.remove(name);
        }
    }

    /** A port over {@code device} of disk {@code name}, forgotten again when it closes. */
    DiskPort openPort(String name, VirtioBlkDevice device, Runnable detached) {
        DevicePort port = device.openPort(detached, this::portClosed);
        ports.computeIfAbsent(name, n -> new ArrayList<>()).add(port);
        return port;
    }

    private void portClosed(DevicePort port) {
        synchronized (lock) {
            List<DevicePort> list = ports.get(port.disk());
            if (list != null) {
                list.remove(port);
                if (list.isEmpty()) {
                    ports.remove(port.disk());
                }
            }
        }
    }

    /**
     * Closes everything disk {@code name} handed out, before its own device and backend close: its ports first
     * (each detached, waiting for its requests), then its exported devices (reset and closed); collects failures.
     */
    void closeAll(String name, List<Throwable> failures) {
        // Ports first, while the device still serves the guest requests their requests may wait for.
        List<DevicePort> open = ports.remove(name);
        for (DevicePort port : open == null ? List.<DevicePort>of() : List.copyOf(open)) {
            try {
                port.detach();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        for (Export exported : exports.getOrDefault(name, List.of())) {
            notifiers.removeListener(exported.listener());
            try {
                // Its transport may still be attached (a vhost-user export being stopped): the reset stops the
                // queues, the close ends the export's own worker pool, before the backend closes below.
                exported.device().reset();
                exported.device().close();
            } catch (RuntimeException e) {
                failures.add(e);
            }
        }
        exports.remove(name);
    }
}
