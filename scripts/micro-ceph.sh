#!/usr/bin/env bash
# A single-node Ceph cluster for the RBD backend's tests, in the manner of go-ceph's micro-osd script: one
# monitor, one manager, one OSD, no authentication (auth ... = none), pools of size 1, and a pool "rbd" ready for
# images. Everything lives in DIR: ceph.conf, the daemons' data, logs, admin sockets and pid files. The daemons run
# in the foreground of background jobs, so the pids written are theirs; stop kills exactly those pids (never by
# name: other clusters may run on the machine).
#
#   micro-ceph.sh start DIR [--store memstore|bluestore]
#                               start the cluster; prints DIR/ceph.conf when the pool is ready
#   micro-ceph.sh restart-osd DIR
#                               stop the OSD by its pid (SIGTERM), start it again, return once it is up
#   micro-ceph.sh stop DIR      stop the daemons started in DIR (by their pid files), then remove DIR's data
#
# The OSD's store: memstore (the default) keeps the objects in memory and writes them to DIR/osd when the OSD
# stops cleanly (SIGTERM; the conf turns osd_fast_shutdown off for this), so restart-osd keeps the data, but a
# killed OSD loses it. bluestore keeps them in a 1 GiB sparse file, DIR/osd-block, with small caches: the data
# survives any stop. The monitor listens on 127.0.0.1 at a free port (msgr2), so several clusters can run side by
# side. Needs: ceph-mon ceph-osd ceph-mgr ceph-common (Debian), python3.
set -euo pipefail

usage="usage: micro-ceph.sh start DIR [--store memstore|bluestore] | restart-osd DIR | stop DIR"
cmd=${1:?$usage}
dir=${2:?$usage}
store=memstore
if [ "$cmd" = start ] && [ $# -gt 2 ]; then
    [ "$3" = --store ] && [ $# = 4 ] || { echo "$usage" >&2; exit 2; }
    store=$4
fi
case $store in memstore|bluestore) ;; *) echo "micro-ceph: unknown store '$store' ($usage)" >&2; exit 2 ;; esac

# stop_pids SECONDS PIDFILE...: SIGTERM to the pids in the files, up to SECONDS for a clean exit, then SIGKILL by
# the same pids; the pid files go. Returns 1 when SIGKILL was needed.
stop_pids() {
    local seconds=$1 pids=() f clean=0; shift
    for f in "$@"; do
        [ -e "$f" ] || continue
        pids+=("$(cat "$f")")
    done
    [ ${#pids[@]} -eq 0 ] && return 0
    kill "${pids[@]}" 2>/dev/null || true
    for _ in $(seq $((seconds * 10))); do
        local alive=0 p
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && { clean=1; break; }
        sleep 0.1
    done
    [ $clean = 1 ] || kill -9 "${pids[@]}" 2>/dev/null || true
    rm -f "$@"
    [ $clean = 1 ]
}

stop() {
    stop_pids 10 "$dir"/run/*.pid || true
}

# run NAME CMD...: a daemon in the foreground of a background job; its pid in run/NAME.pid.
run() {
    local name=$1; shift
    "$@" -f </dev/null >>"$dir/log/$name.out" 2>&1 &
    echo $! >"$dir/run/$name.pid"
}

if [ "$cmd" = restart-osd ]; then
    dir=$(cd "$dir" && pwd)
    export CEPH_CONF=$dir/ceph.conf
    f=$(ls "$dir"/run/osd.*.pid 2>/dev/null | head -n 1)
    [ -n "$f" ] || { echo "micro-ceph: no OSD pid file in $dir/run" >&2; exit 1; }
    osd=$(basename "$f" .pid); osd=${osd#osd.}
    # The OSD map's epoch now: the restarted OSD is up in a later one (up_from), whatever the stop told the monitor.
    epoch=$(ceph --connect-timeout 30 osd dump --format json 2>/dev/null | python3 -c 'import json,sys; print(json.load(sys.stdin)["epoch"])')
    t0=$(date +%s.%N)
    # A clean stop (memstore writes its objects out): up to 60 s before SIGKILL, which would lose them.
    stop_pids 60 "$f" || { echo "micro-ceph: osd.$osd did not stop within 60 s (killed)" >&2; exit 1; }
    t1=$(date +%s.%N)
    run "osd.$osd" ceph-osd --id "$osd"
    deadline=$(($(date +%s) + 120))
    while [ "$(date +%s)" -lt $deadline ]; do
        if ceph --connect-timeout 10 osd dump --format json 2>/dev/null | python3 -c '
import json, sys
d = json.load(sys.stdin)
sys.exit(0 if any(o["osd"] == int(sys.argv[1]) and o["up"] == 1 and o["up_from"] > int(sys.argv[2])
                  for o in d["osds"]) else 1)' "$osd" "$epoch"; then
            t2=$(date +%s.%N)
            python3 -c 'import sys; a = [float(x) for x in sys.argv[2:]]; print("micro-ceph: osd.%s stopped in %.1f s, up again %.1f s later" % (sys.argv[1], a[1] - a[0], a[2] - a[1]))' "$osd" "$t0" "$t1" "$t2" >&2
            exit 0
        fi
        kill -0 "$(cat "$f")" 2>/dev/null || { echo "micro-ceph: osd.$osd ended while starting; see $dir/log" >&2; exit 1; }
        sleep 0.2
    done
    echo "micro-ceph: osd.$osd not up within 120 s" >&2
    exit 1
fi

if [ "$cmd" = stop ]; then
    stop
    rm -rf "${dir:?}/mon" "${dir:?}/osd" "${dir:?}/mgr" "${dir:?}/osd-block"
    exit 0
fi
[ "$cmd" = start ] || { echo "$usage" >&2; exit 2; }

mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
mkdir -p "$dir/log" "$dir/run" "$dir/mon" "$dir/osd" "$dir/mgr"
trap 'echo "micro-ceph: start failed; logs in $dir/log" >&2; stop' ERR

# A free TCP port for the monitor: ask the kernel (bind port 0) through python3, which ceph-mgr needs anyway.
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
fsid=$(cat /proc/sys/kernel/random/uuid)
export CEPH_CONF=$dir/ceph.conf
cat >"$CEPH_CONF" <<CONF
[global]
fsid = $fsid
mon host = [v2:127.0.0.1:$port]
ms bind msgr1 = false
auth cluster required = none
auth service required = none
auth client required = none
osd pool default size = 1
osd pool default min size = 1
osd crush chooseleaf type = 0
mon allow pool delete = true
mon allow pool size one = true
mon warn on pool no redundancy = false
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
log to stderr = false
err to stderr = true
keyring = /dev/null

[mon]
public addr = v2:127.0.0.1:$port
mon data = $dir/mon
mon data avail crit = 0
mon cluster log file = $dir/log/cluster.log

[osd]
public addr = 127.0.0.1
cluster addr = 127.0.0.1
osd data = $dir/osd
osd objectstore = $store
# A clean stop unmounts the store (memstore writes its objects out) and tells the monitor at once.
osd fast shutdown = false
memstore device bytes = 1073741824
bluestore block path = $dir/osd-block
bluestore block create = true
bluestore block size = 1073741824
bluestore cache autotune = false
bluestore cache size = 67108864
bluestore fsck on mount = false
osd memory target = 268435456
osd op num shards = 1
osd op num threads per shard = 2
osd class load list = *
osd class default list = *

[mgr]
mgr data = $dir/mgr
CONF

ceph-mon --id a --mkfs --fsid "$fsid" --keyring /dev/null >>"$dir/log/mon.a.out" 2>&1
touch "$dir/mon/keyring"
run mon.a ceph-mon --id a
run mgr.x ceph-mgr --id x

osd=$(ceph --connect-timeout 60 osd create)
ceph osd crush add "osd.$osd" 1 root=default >/dev/null 2>&1
ceph-osd --id "$osd" --mkfs --keyring /dev/null >>"$dir/log/osd.$osd.out" 2>&1
run "osd.$osd" ceph-osd --id "$osd"

ceph osd pool create rbd 8 >/dev/null 2>&1
ceph osd pool set rbd size 1 --yes-i-really-mean-it >/dev/null 2>&1 || true
rbd pool init rbd
trap - ERR
echo "$CEPH_CONF"
