package io.kickplug.blk.testkit;

import io.kickplug.api.blk.DiskException;
import io.kickplug.api.blk.DiskInfo;
import io.kickplug.api.blk.DiskManager;
import io.kickplug.api.blk.DiskSpec;
import io.kickplug.api.blk.TrackedLockKind;
import io.kickplug.api.poll.PollParams;
import io.kickplug.api.poll.PollStatus;
import io.kickplug.api.transport.GuestPort;
import io.kickplug.api.virtio.VirtioDevice;
import java.util.List;

/**
 * A {@link DiskManager} for tests of its consumers (commands, workloads, configuration components): no disks,
 * and every other operation refused with a {@link DiskException}, as a disk manager refuses what it cannot do. A
 * test overrides what it needs; a real one is the in-process {@link InProcessHost#registry()}.
 */
public class StubDiskManager implements DiskManager {

    private static DiskException unsupported(String operation) {
        return new DiskException(operation + " is not supported by this test's disk manager");
    }

    @Override
    public DiskInfo attach(DiskSpec spec) {
        throw unsupported("attach");
    }

    @Override
    public void detach(String name) {
        throw unsupported("detach");
    }

    @Override
    public List<DiskInfo> list() {
        return List.of();
    }

    @Override
    public DiskInfo info(String name) {
        throw unsupported("info");
    }

    @Override
    public GuestPort port(String name) {
        throw unsupported("port");
    }

    @Override
    public long ioThreadCpuNanos(String name) {
        return -1;
    }

    @Override
    public DiskInfo resize(String name, long newSizeBytes) {
        throw unsupported("resize");
    }

    @Override
    public DiskInfo setTrackedLock(String name, TrackedLockKind kind) {
        throw unsupported("setTrackedLock");
    }

    @Override
    public PollStatus setPolling(String name, boolean enabled, PollParams params) {
        throw unsupported("setPolling");
    }

    @Override
    public PollStatus pollStatus(String name) {
        throw unsupported("pollStatus");
    }

    @Override
    public VirtioDevice exportDevice(String name, int numQueues) {
        throw unsupported("exportDevice");
    }

    @Override
    public void releaseExport(String name, VirtioDevice device) {
        throw unsupported("releaseExport");
    }
}
