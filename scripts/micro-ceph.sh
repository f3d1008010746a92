#!/usr/bin/env bash
# A single-node Ceph cluster for the RBD backend's tests, in the manner of go-ceph's micro-osd script: one
# monitor, one manager, one OSD on memstore, no authentication (auth ... = none), pools of size 1, and a pool
# "rbd" ready for images. Everything lives in DIR: ceph.conf, the daemons' data, logs, admin sockets and pid
# files. The daemons run in the foreground of background jobs, so the pids written are theirs; stop kills
# exactly those pids (never by name: other clusters may run on the machine).
#
#   micro-ceph.sh start DIR     start the cluster; prints DIR/ceph.conf when the pool is ready
#   micro-ceph.sh stop DIR      stop the daemons started in DIR (by their pid files), then remove DIR's data
#
# The monitor listens on 127.0.0.1 at a free port (msgr2), so several clusters can run side by side.
# Needs: ceph-mon ceph-osd ceph-mgr ceph-common (Debian), uuidgen or /proc/sys/kernel/random/uuid.
set -euo pipefail

cmd=${1:?usage: micro-ceph.sh start|stop DIR}
dir=${2:?usage: micro-ceph.sh start|stop DIR}

stop() {
    local pids=() f
    for f in "$dir"/run/*.pid; do
        [ -e "$f" ] || continue
        pids+=("$(cat "$f")")
    done
    [ ${#pids[@]} -eq 0 ] && return 0
    kill "${pids[@]}" 2>/dev/null || true
    # Up to 10 s for a clean exit, then SIGKILL by the same pids.
    for _ in $(seq 100); do
        local alive=0 p
        for p in "${pids[@]}"; do kill -0 "$p" 2>/dev/null && alive=1; done
        [ $alive = 0 ] && break
        sleep 0.1
    done
    kill -9 "${pids[@]}" 2>/dev/null || true
    rm -f "$dir"/run/*.pid
}

if [ "$cmd" = stop ]; then
    stop
    rm -rf "${dir:?}/mon" "${dir:?}/osd" "${dir:?}/mgr"
    exit 0
fi
[ "$cmd" = start ] || { echo "usage: micro-ceph.sh start|stop DIR" >&2; exit 2; }

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
osd objectstore = memstore
memstore device bytes = 1073741824
osd memory target = 268435456
osd op num shards = 1
osd op num threads per shard = 2
osd class load list = *
osd class default list = *

[mgr]
mgr data = $dir/mgr
CONF

# run NAME CMD...: a daemon in the foreground of a background job; its pid in run/NAME.pid.
run() {
    local name=$1; shift
    "$@" -f </dev/null >>"$dir/log/$name.out" 2>&1 &
    echo $! >"$dir/run/$name.pid"
}

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
