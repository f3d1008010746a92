#!/bin/bash
# Start-to-ready time of the storage daemon (a measurement, not a test): starts
#   distribution/target/kickplugd --control ctl.sock --log-level info -f serve.gosh   (as the systemd unit logs)
# (serve.gosh: one null disk of 1 GiB with 2 queues and a kp:vhost export) RUNS times, one after the other,
# and prints for each run the wall time from the start of the process to the control socket being there (the
# launcher opens it after the export), the daemon's CPU time (user+sys) at that moment, the time the launcher
# itself reports (from its main class on, so the difference is the JVM's own start) and the load average; then the
# median of the wall times. The ready moment is the control socket's modification time (set when it is bound), and
# the wait for it forks nothing (a `sleep` process per poll takes CPU from the starting daemon on a 2-core
# machine and showed it half a second slower). Wall time depends on the machine's load: compare runs made under the
# same load, and read the CPU column too. A first start (run 0, not counted) makes the daemon's bundle cache
# when the build is new (docs/service.md, "JVM flags and start-up"); every counted run starts from it.
#
#   scripts/ready-time.sh [RUNS] [KICKPLUGD]       (defaults: 5, distribution/target/kickplugd)
#
# Needs a built distribution (mvn -B package -DskipTests). Extra JVM flags: KICKPLUG_JAVA_EXTRA.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
runs=${1:-5}
kickplugd=${2:-$root/distribution/target/kickplugd}
[ -f "$kickplugd" ] || { echo "build the distribution first: $kickplugd is missing" >&2; exit 2; }
hz=$(getconf CLK_TCK)
walls=()
for r in $(seq 0 "$runs"); do
    work=$(mktemp -d /tmp/kp-ready.XXXXXX)
    cat >"$work/serve.gosh" <<EOF2
kp:attach --queues 2 --iothreads 1 --backend null d0 1073741824
kp:vhost d0 --socket $work/export.sock --queues 2
EOF2
    # A FIFO opened for reading and writing that nobody writes: `read -t` on it sleeps without a process.
    mkfifo "$work/tick"
    exec 9<>"$work/tick"
    t0=$(date +%s%N)
    sh "$kickplugd" --control "$work/ctl.sock" --log-level info -f "$work/serve.gosh" >"$work/log" 2>&1 &
    pid=$!
    while ! [ -S "$work/ctl.sock" ]; do
        if ! kill -0 "$pid" 2>/dev/null; then
            echo "the daemon ended before it was ready:" >&2
            cat "$work/log" >&2
            rm -rf "$work"
            exit 1
        fi
        read -r -t 0.002 -u 9 _
    done
    cpu=$(awk -v hz="$hz" '{printf "%d", ($14 + $15) * 1000 / hz}' "/proc/$pid/stat")
    ms=$(( ($(date -r "$work/ctl.sock" +%s%N) - t0) / 1000000 ))
    own= # the launcher logs its ready line right after it opens the socket
    for _ in $(seq 200); do
        own=$(sed -n 's/.*ready in \([0-9]*\) ms after the launcher started.*/\1/p' "$work/log")
        [ -n "$own" ] && break
        read -r -t 0.01 -u 9 _
    done
    exec 9<&-
    if [ "$r" -eq 0 ]; then
        echo "run 0 (not counted: makes the bundle cache of a new build): ready ${ms} ms, cpu ${cpu} ms"
    else
        echo "run $r: ready ${ms} ms (launcher ${own:-?} ms), cpu ${cpu} ms, load average $(cut -d' ' -f1-3 /proc/loadavg)"
        walls+=("$ms")
    fi
    kill "$pid"
    wait "$pid" 2>/dev/null
    rm -rf "$work"
    sleep 1
done
printf '%s\n' "${walls[@]}" | sort -n | awk '{a[NR] = $1} END {printf "median %d ms of %d runs\n", a[int((NR + 1) / 2)], NR}'
