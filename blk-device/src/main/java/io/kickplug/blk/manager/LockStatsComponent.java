package io.kickplug.blk.manager;

import io.kickplug.api.lockstat.LockStatRow;
import io.kickplug.api.lockstat.LockStatSource;
import io.kickplug.api.lockstat.LockStats;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.osgi.service.component.annotations.Component;
import org.osgi.service.component.annotations.Reference;
import org.osgi.service.component.annotations.ReferenceCardinality;
import org.osgi.service.component.annotations.ReferencePolicy;

/**
 * The one lock statistics table ({@code kp:lockstat}): the rows of every {@link LockStatSource} service (the
 * guest's vq locks, the devices' tracked-requests locks). Hosted by the device bundle, so the device rows stay
 * while the guest bundle is stopped.
 */
@Component(service = LockStats.class)
public final class LockStatsComponent implements LockStats {

    private final List<LockStatSource> sources = new CopyOnWriteArrayList<>();

    @Reference(name = "lockStatSource", cardinality = ReferenceCardinality.MULTIPLE,
            policy = ReferencePolicy.DYNAMIC, unbind = "removeSource")
    void addSource(LockStatSource source) {
        sources.add(source);
    }

    void removeSource(LockStatSource source) {
        sources.remove(source);
    }

    @Override
    public List<LockStatRow> rows() {
        List<LockStatRow> rows = new ArrayList<>();
        for (LockStatSource s : sources) {
            rows.addAll(s.lockStats());
        }
        rows.sort(Comparator.comparing(LockStatRow::name));
        return rows;
    }

    @Override
    public void reset() {
        sources.forEach(LockStatSource::resetLockStats);
    }
}
