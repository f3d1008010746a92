package io.kickplug.api.transport;

import org.osgi.annotation.versioning.ProviderType;

/** A modeled PCI function: its configuration space and its memory BARs, as a guest sees them. */
@ProviderType
public interface PciFunction {

    /** The 4 KiB PCI (express) configuration space. */
    RegisterWindow configSpace();

    /** Memory BAR {@code index} (0 to 5), or {@code null} when not implemented. */
    RegisterWindow bar(int index);
}
