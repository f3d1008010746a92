package io.kickplug.export.nbd.ds;

import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.transport.ExportStatus;
import io.kickplug.export.nbd.NbdService;
import org.osgi.framework.BundleContext;
import org.osgi.framework.ServiceRegistration;
import org.osgi.service.cm.ConfigurationAdmin;
import org.osgi.service.component.annotations.Activate;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Deactivate;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;

/**
 * The NBD server and exports of this bundle ({@link NbdService}), registered as a service for the {@code kp:nbd-*}
 * commands, and
 * their {@link ExportStatus} for {@code kp:disks}. When it activates (this bundle or the disk manager came back) it
 * starts the saved server and exports again; when it deactivates it ends them and keeps what is saved. Static
 * references: the disk manager going away deactivates it first, so its exports end before the disks quiesce.
 */
@Component(service = {}, immediate = true)
public final class NbdComponent {

    private final NbdService service;
    private final ServiceRegistration<ExportStatus> status;
    private final ServiceRegistration<NbdService> commands;

    @Activate
    public NbdComponent(BundleContext context, @Reference(name = "diskManager") DiskManager disks,
            @Reference(name = "configurationAdmin", cardinality = ReferenceCardinality.OPTIONAL)
            ConfigurationAdmin configAdmin) {
        this.service = new NbdService(disks, configAdmin == null ? NbdService.Store.NONE
                : new ConfigAdminStore(configAdmin));
        this.service.restore();
        this.status = context.registerService(ExportStatus.class, service::exportStatus, null);
        this.commands = context.registerService(NbdService.class, service, null);
    }

    @Deactivate
    void deactivate() {
        for (ServiceRegistration<?> r : new ServiceRegistration<?>[] {commands, status}) {
            try {
                r.unregister();
            } catch (IllegalStateException e) {
                // gone with the bundle
            }
        }
        service.close();
    }
}
