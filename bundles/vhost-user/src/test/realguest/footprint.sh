#!/bin/bash
# Footprint of the storage daemon (a benchmark, not a test): for Kickplug's daemon started as a service
# starts it (distribution/target/kickplugd, the daemon's JVM flags), for `java -jar kickplug.jar --daemon`
# with the JVM's default flags, and for qemu-storage-daemon when it is installed, in one run and on the
# same export (one null disk, 2 queues, vhost-user-blk):
#   READY-MS    start of the process to its socket being there (Kickplug: the control socket, opened after
#               the export; qsd: the export socket)
#   RSS-IDLE    resident memory (VmRSS) 5 s after ready, and threads then
#   RSS-MAX     highest VmRSS sampled every second while a real guest runs fio randread 4k at iodepth 64
#               (numjobs 2, one per queue) for --runtime seconds (default 60)
#   RSS-AFTER   VmRSS when fio ends, with its anon/file/shmem split (shmem: guest pages the backend touched)
#   THREADS     idle / under load
#
#   footprint.sh [--runtime SECONDS] [--queues N] [--only kickplug|kickplug-default|qsd]
#
# Needs distribution/target/kickplug.jar and kickplugd (mvn -B package -DskipTests) and the real-guest cache
# (realguest.sh prepare bundles/vhost-user/target/realguest). The guest runs under TCG unless the CPU has
# vmx/svm. Memory figures do not depend on the machine's load; READY-MS does: compare within one run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
kickplugd=$root/distribution/target/kickplugd
runtime=60
queues=2
only=""
while [ $# -gt 0 ]; do
    case $1 in
        --runtime) runtime=$2; shift 2 ;;
        --queues) queues=$2; shift 2 ;;
        --only) only=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
[ -f "$jar" ] && [ -f "$kickplugd" ] || { echo "build the distribution first: $jar or $kickplugd is missing" >&2; exit 2; }
bash "$here/realguest.sh" prepare "$cache" >/dev/null

bench_work kp-fp
size=$((1 << 30))

status_kb() { awk -v k="$2:" '$1 == k {print $2}' "/proc/$1/status"; }
mb() { awk -v kb="$1" 'BEGIN {printf "%.1f", kb / 1024}'; }
threads() { ls "/proc/$1/task" | wc -l; }

randread_job 64 "$queues" qd64

measure() { # kind
    local kind=$1 sock=$work/export.sock ready=$work/export.sock
    rm -f "$work"/*.sock
    serve_gosh "$sock"
    # `read -t` on a FIFO nobody writes sleeps without a process: a `sleep` per poll would take CPU from the
    # starting server on a 2-core machine. The ready moment is the socket's modification time (when it is bound).
    rm -f "$work/tick"
    mkfifo "$work/tick"
    exec 9<>"$work/tick"
    local t0
    t0=$(date +%s%N)
    case $kind in
        kickplug)
            ready=$work/ctl.sock
            sh "$kickplugd" --control "$ready" -f "$work/serve.gosh" >"$work/$kind.log" 2>&1 &
            ;;
        kickplug-default)
            ready=$work/ctl.sock
            java -jar "$jar" --daemon --control "$ready" -f "$work/serve.gosh" >"$work/$kind.log" 2>&1 &
            ;;
        qsd)
            start_qsd "$sock" "$work/$kind.log"
            ;;
    esac
    backend_pid=$!
    local i=0
    while ! [ -S "$ready" ]; do
        i=$((i + 1))
        if [ $i -gt 12000 ] || ! kill -0 "$backend_pid" 2>/dev/null; then
            echo "$kind did not become ready:" >&2
            cat "$work/$kind.log" >&2
            exit 1
        fi
        read -r -t 0.005 -u 9 _ || true # times out: nobody writes
    done
    exec 9<&-
    local ready_ms=$(( ($(date -r "$ready" +%s%N) - t0) / 1000000 ))
    sleep 5
    local rss_idle thr_idle
    rss_idle=$(status_kb "$backend_pid" VmRSS)
    thr_idle=$(threads "$backend_pid")
    [ "$kind" = qsd ] || ls /proc/"$backend_pid"/task | while read -r t; do cat "/proc/$backend_pid/task/$t/comm"; done \
        | sed 's/[0-9]\+$/N/' | sort | uniq -c | sort -rn >"$work/$kind.threads"

    local thr_load="" rss_after="" split="" out=$work/guest.log
    : >"$out"
    echo 0 >"$work/rss-max"
    ( max=0; while kill -0 "$backend_pid" 2>/dev/null; do
        r=$(status_kb "$backend_pid" VmRSS); [ "$r" -le "$max" ] || { max=$r; echo "$max" >"$work/rss-max"; }
        sleep 1
    done ) &
    local sampler=$!
    while IFS= read -r line; do
        echo "$line" >>"$out"
        case $line in
            RG-FIO-EXIT*)   # fio has just ended: what the backend holds after the run, and its threads under load
                rss_after=$(status_kb "$backend_pid" VmRSS)
                split="$(mb "$(status_kb "$backend_pid" RssAnon)")/$(mb "$(status_kb "$backend_pid" RssFile)")/$(mb "$(status_kb "$backend_pid" RssShmem)")"
                thr_load=$(threads "$backend_pid")
                ;;
        esac
    done < <(bash "$here/realguest.sh" run "$cache" "$sock" "$work/job.fio" --queues "$queues" --sum-mb 1 2>&1)
    kill "$sampler" 2>/dev/null || true
    wait "$sampler" 2>/dev/null || true
    local rss_max
    rss_max=$(cat "$work/rss-max")
    if ! grep -q 'RG-FIO-EXIT=0' "$out"; then
        echo "the guest's fio failed on $kind:" >&2
        tail -30 "$out" >&2
        exit 1
    fi
    local iops
    iops=$(grep -o 'read: IOPS=[0-9.k]*' "$out" | head -1 | sed 's/read: IOPS=//')
    printf "%-17s %8s %9s %8s %9s %-16s %6s %6s %8s\n" "$kind" "$ready_ms" "$(mb "$rss_idle")" "$(mb "$rss_max")" \
        "$(mb "$rss_after")" "$split" "$thr_idle" "$thr_load" "$iops"
    kill "$backend_pid" 2>/dev/null || true
    wait "$backend_pid" 2>/dev/null || true
    backend_pid=""
}

echo "one null disk, $queues queues, one vhost-user-blk export; guest fio randread 4k iodepth 64 numjobs $queues for" \
    "$runtime s ($(grep -qwE 'vmx|svm' /proc/cpuinfo && echo KVM || echo TCG)); load average $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-17s %8s %9s %8s %9s %-16s %6s %6s %8s\n" BACKEND READY-MS RSS-IDLE RSS-MAX RSS-AFTER "ANON/FILE/SHMEM" THR-ID THR-LD IOPS
kinds="kickplug kickplug-default"
command -v qemu-storage-daemon >/dev/null && kinds="$kinds qsd" || echo "(qemu-storage-daemon not installed: apt-get install qemu-system-common)"
for k in $kinds; do
    [ -z "$only" ] || [ "$only" = "$k" ] || continue
    measure "$k"
done
echo "(memory in MiB; Kickplug's threads when idle, by name:)"
[ ! -f "$work/kickplug.threads" ] || sed 's/^/  /' "$work/kickplug.threads"
