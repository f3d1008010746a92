package io.kickplug.vhost.backend;

import io.kickplug.api.memory.GuestMemory;
import io.kickplug.api.memory.GuestMemoryFactory;
import io.kickplug.vhost.protocol.Fds;
import java.io.FileDescriptor;
import java.io.IOException;
import java.lang.System.Logger;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;

/**
 * The guest memory of one vhost-user session: the {@link MemoryTable} of mapped regions (SET_MEM_TABLE,
 * ADD_MEM_REG, REM_MEM_REG), the {@link GuestMemory} built over it for the next device start, and its size for
 * {@link BackendDevice#status} from other threads. {@link BackendDevice} stops the device before a change and
 * restarts it after; this class maps, swaps and unmaps. Runs on the connection's message thread only; the running
 * device holds the {@link GuestMemory} it was activated with, so nothing here is on the request path.
 */
final class SessionMemory {

    /** The session's logger, as before these steps moved out of {@link BackendDevice}. */
    private static final Logger LOG = System.getLogger(BackendDevice.class.getName());

    private final String name;
    private final GuestMemoryFactory memoryFactory;
    private final MemoryTable memoryTable = new MemoryTable();
    private GuestMemory memory;
    /** Region count and bytes, for {@link BackendDevice#status} from other threads. */
    private volatile int memoryRegions;
    private volatile long memoryBytes;

    SessionMemory(String name, GuestMemoryFactory memoryFactory) {
        this.name = name;
        this.memoryFactory = memoryFactory;
    }

    MemoryTable table() {
        return memoryTable;
    }

    /** The memory over the current table, or {@code null} before the first table. */
    GuestMemory memory() {
        return memory;
    }

    int regionCount() {
        return memoryRegions;
    }

    long totalBytes() {
        return memoryBytes;
    }

    /**
     * SET_MEM_TABLE's first step, before the device stops: maps the checked regions (not mapped yet, one
     * descriptor each). On a failure closes every descriptor, unmaps what it mapped and refuses.
     */
    List<MemoryTable.Region> mapAll(List<MemoryTable.Region> desc, FileDescriptor[] fds) throws Refused {
        List<MemoryTable.Region> fresh = new ArrayList<>();
        try {
            for (int i = 0; i < desc.size(); i++) {
                fresh.add(MemoryTable.map(fds[i], desc.get(i)));
                fds[i] = null;
            }
        } catch (IOException e) {
            Fds.closeAll(fds);
            MappingRelease.release(name, true, fresh, null); // never used: nothing can touch them
            throw new Refused("cannot map region " + fresh.size() + ": " + e.getMessage(), e);
        }
        return fresh;
    }

    /** With the device stopped: replaces the table with the {@code fresh} regions and releases the old ones. */
    void replace(List<MemoryTable.Region> fresh, boolean resetsClean) {
        List<MemoryTable.Region> replaced = memoryTable.clear();
        fresh.forEach(memoryTable::add);
        rebuildMemory();
        MappingRelease.release(name, resetsClean, replaced, null);
        LOG.log(Level.INFO, "vhost-user " + name + ": memory table of " + fresh.size() + " regions, "
                + memoryTable.totalBytes() + " bytes");
    }

    /** ADD_MEM_REG's first step, before the device stops: maps a checked region. */
    static MemoryTable.Region map(FileDescriptor fd, MemoryTable.Region checked) throws Refused {
        try {
            return MemoryTable.map(fd, checked);
        } catch (IOException e) {
            throw new Refused("cannot map the region: " + e.getMessage(), e);
        }
    }

    /** With the device stopped: adds a mapped region. */
    void add(MemoryTable.Region r) {
        memoryTable.add(r);
        rebuildMemory();
        LOG.log(Level.INFO, "vhost-user " + name + ": added memory region " + r);
    }

    /** REM_MEM_REG's check, before the device stops: refused when no region has that identity. */
    void checkKnown(long gpa, long size, long uva) throws Refused {
        boolean known = memoryTable.regions().stream().anyMatch(r -> r.sameIdentity(gpa, size, uva));
        if (!known) {
            throw new Refused(String.format("no region at guest address 0x%x, size 0x%x, user address 0x%x", gpa,
                    size, uva));
        }
    }

    /** With the device stopped: removes the region with that identity and releases it. */
    void remove(long gpa, long size, long uva, boolean resetsClean) {
        MemoryTable.Region removed = memoryTable.remove(gpa, size, uva);
        rebuildMemory();
        MappingRelease.release(name, resetsClean, List.of(removed), null);
        LOG.log(Level.INFO, String.format("vhost-user %s: removed memory region at guest address 0x%x", name, gpa));
    }

    /** With the device stopped: drops every region and returns them, for the caller to release. */
    List<MemoryTable.Region> clear() {
        List<MemoryTable.Region> regions = memoryTable.clear();
        rebuildMemory();
        return regions;
    }

    private void rebuildMemory() {
        memory = memoryTable.build(memoryFactory);
        memoryRegions = memoryTable.count();
        memoryBytes = memoryTable.totalBytes();
    }
}
