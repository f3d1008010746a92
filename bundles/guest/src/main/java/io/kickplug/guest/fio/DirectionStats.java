package io.kickplug.guest.fio;

/** What one job (or a group) did in one direction: completed I/Os, bytes, latencies. */
public final class DirectionStats {

    private long ios;
    private long bytes;
    private final LatencyStat slat = new LatencyStat();
    private final LatencyStat clat = new LatencyStat();
    private final LatencyStat lat = new LatencyStat();

    /**
     * One completed I/O: {@code slatNanos} from its issue to the end of its submission round (negative for
     * synchronous engines, which have no separate submission), {@code clatNanos} from submission to
     * completion, and {@code latNanos} from issue to completion.
     */
    public void record(int length, long slatNanos, long clatNanos, long latNanos) {
        ios++;
        bytes += length;
        if (slatNanos >= 0) {
            slat.record(slatNanos);
        }
        clat.record(clatNanos);
        lat.record(latNanos);
    }

    public void add(DirectionStats other) {
        ios += other.ios;
        bytes += other.bytes;
        slat.add(other.slat);
        clat.add(other.clat);
        lat.add(other.lat);
    }

    public long ios() {
        return ios;
    }

    public long bytes() {
        return bytes;
    }

    public LatencyStat slat() {
        return slat;
    }

    public LatencyStat clat() {
        return clat;
    }

    public LatencyStat lat() {
        return lat;
    }
}
