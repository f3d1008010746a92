package io.kickplug.blk.manager;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.kickplug.virtio.ds.GuestMemoryFactoryComponent;
import io.kickplug.virtio.ds.IoThreadFactoryComponent;
import io.kickplug.virtio.ds.TransportFactoryComponent;
import io.kickplug.virtio.queue.ds.VirtqueueFactoryComponent;
import java.lang.reflect.Field;
import java.lang.reflect.Proxy;
import java.util.Dictionary;
import java.util.Hashtable;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.osgi.framework.Bundle;
import org.osgi.framework.BundleContext;
import org.osgi.service.cm.Configuration;
import org.osgi.service.cm.ConfigurationAdmin;

/**
 * A disk manager on its way out (its bundle is being updated; SCR unbinds ConfigAdmin after deactivate) still
 * says which disks are configured: a caller holding it (kp:fio waiting for its disk across the update, HotSwapIT's
 * "no disk named 'hm'" under load) must learn the disk is coming back, not that it does not exist.
 */
class ConfiguredAfterCloseTest {

    @Test
    void aDeactivatedManagerStillListsTheDisksConfiguredWhenItWent() throws Exception {
        DiskManagerComponent manager = new DiskManagerComponent(
                new TransportFactoryComponent(new VirtqueueFactoryComponent()), new IoThreadFactoryComponent(),
                new GuestMemoryFactoryComponent(), runningFramework());
        Field admin = DiskManagerComponent.class.getDeclaredField("configAdmin");
        admin.setAccessible(true);
        admin.set(manager, configAdminWith("hm"));
        assertEquals(List.of("hm"), manager.configuredDisks());

        manager.deactivate();
        admin.set(manager, null); // what SCR does after deactivate
        assertEquals(List.of("hm"), manager.configuredDisks(), "configured when it went: on its way back");
    }

    @Test
    void aManagerThatNeverHadConfigAdminListsOnlyItsDisks() {
        DiskManagerComponent manager = new DiskManagerComponent(
                new TransportFactoryComponent(new VirtqueueFactoryComponent()), new IoThreadFactoryComponent(),
                new GuestMemoryFactoryComponent(), null);
        assertEquals(List.of(), manager.configuredDisks());
        manager.close();
    }

    /** A bundle context whose framework is active (the manager's bundle is updated, the framework runs on). */
    private static BundleContext runningFramework() {
        Bundle system = (Bundle) Proxy.newProxyInstance(Bundle.class.getClassLoader(), new Class<?>[] {Bundle.class},
                (p, m, a) -> {
                    if (m.getName().equals("getState")) {
                        return Bundle.ACTIVE;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
        return (BundleContext) Proxy.newProxyInstance(BundleContext.class.getClassLoader(),
                new Class<?>[] {BundleContext.class}, (p, m, a) -> {
                    if (m.getName().equals("getBundle")) {
                        return system;
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
    }

    private static ConfigurationAdmin configAdminWith(String disk) {
        Dictionary<String, Object> props = new Hashtable<>();
        props.put("name", disk);
        props.put("service.factoryPid", DiskConfig.FACTORY_PID);
        Configuration config = (Configuration) Proxy.newProxyInstance(Configuration.class.getClassLoader(),
                new Class<?>[] {Configuration.class}, (p, m, a) -> switch (m.getName()) {
                    case "getProperties" -> props;
                    case "getFactoryPid" -> DiskConfig.FACTORY_PID;
                    default -> throw new UnsupportedOperationException(m.getName());
                });
        return (ConfigurationAdmin) Proxy.newProxyInstance(ConfigurationAdmin.class.getClassLoader(),
                new Class<?>[] {ConfigurationAdmin.class}, (p, m, a) -> {
                    if (m.getName().equals("listConfigurations")) {
                        return new Configuration[] {config};
                    }
                    throw new UnsupportedOperationException(m.getName());
                });
    }
}
