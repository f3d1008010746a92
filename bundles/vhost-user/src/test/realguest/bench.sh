#!/bin/bash
# Benchmark (not a test): the same Linux guest and fio job against Kickplug's vhost-user-blk export and
# against qemu-storage-daemon's, on a null backend, in one run. Prints IOPS, completion-latency percentiles
# and the backend process's CPU time per I/O (utime+stime from /proc/PID/stat, sampled when the guest
# starts and ends fio).
#
#   bench.sh [--runtime SECONDS] [--queues N] [--packed on|off] [--backends "kickplug qsd"]
#
# --packed on boots QEMU with packed=on on its vhost-user-blk-pci device: Kickplug serves packed rings,
# qemu-storage-daemon does not offer VIRTIO_F_RING_PACKED and its guest runs split rings (the PACKED column
# says what the guest asked for). --backends picks which of the two run.
#
# Needs: distribution/target/kickplug.jar (mvn -B install -DskipTests) and the real-guest cache
# (realguest.sh prepare bundles/vhost-user/target/realguest). The guest runs under KVM when the CPU has
# vmx/svm and /dev/kvm is writable, under TCG otherwise; each row's ACCEL column is the accelerator that
# run's QEMU was started with and completed under (read from its boot line, not guessed from the CPU), so
# under TCG absolute numbers are those of an emulated guest; compare the two backends within one run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
runtime=10
queues=2
packed=off
backends="kickplug qsd"
while [ $# -gt 0 ]; do
    case $1 in
        --runtime) runtime=$2; shift 2 ;;
        --queues) queues=$2; shift 2 ;;
        --packed) packed=$2; shift 2 ;;
        --backends) backends=$2; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
[ -f "$jar" ] || { echo "build the distribution first: $jar is missing" >&2; exit 2; }
bash "$here/realguest.sh" prepare "$cache" >/dev/null
command -v qemu-storage-daemon >/dev/null || { echo "qemu-storage-daemon is missing (package qemu-system-common)" >&2; exit 2; }

bench_work kp-bench
hz=$(getconf CLK_TCK)
size=$((1 << 30))

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

start_backend() { # kind socket
    local kind=$1 sock=$2
    rm -f "$sock"
    case $kind in
        kickplug)
            serve_gosh "$sock"
            java -jar "$jar" --daemon -f "$work/serve.gosh" >"$work/backend.log" 2>&1 &
            ;;
        qsd)
            start_qsd "$sock" "$work/backend.log"
            ;;
    esac
    backend_pid=$!
    for _ in $(seq 300); do [ -S "$sock" ] && return 0; sleep 0.1; done
    echo "backend $kind did not create $sock:" >&2
    cat "$work/backend.log" >&2
    exit 1
}

# The accelerator a completed run used: realguest.sh's boot line ("RG: booting (... -accel kvm -cpu host)")
# is QEMU's own command line, and a QEMU that cannot use KVM exits instead of booting, so a run that
# reached RG-FIO-EXIT=0 ran under what this line names. KVM or TCG; "?" when the line is missing.
run_accel() { # guest-log
    local a
    a=$(grep -o 'RG: booting ([^)]*' "$1" | head -1 | grep -o -- '-accel [a-z]*' | awk '{print toupper($2)}' || true)
    echo "${a:-?}"
}

run_one() { # kind iodepth numjobs
    local kind=$1 depth=$2 jobs=$3 sock=$work/$1.sock
    randread_job "$depth" "$jobs" randread
    start_backend "$kind" "$sock"
    local t0="" t1="" out=$work/guest.log
    : >"$out"
    while IFS= read -r line; do
        echo "$line" >>"$out"
        case $line in
            RG-FIO-BEGIN*) t0=$(cpu_ticks "$backend_pid") ;;
            RG-FIO-EXIT*) t1=$(cpu_ticks "$backend_pid") ;;
        esac
    done < <(bash "$here/realguest.sh" run "$cache" "$sock" "$work/job.fio" --queues "$queues" --packed "$packed" --sum-mb 1 2>&1)
    kill "$backend_pid" 2>/dev/null || true
    wait "$backend_pid" 2>/dev/null || true
    backend_pid=""
    if ! grep -q 'RG-FIO-EXIT=0' "$out" || [ -z "$t0" ] || [ -z "$t1" ]; then
        echo "run $kind iodepth=$depth numjobs=$jobs failed:" >&2
        tail -40 "$out" >&2
        return 1
    fi
    local ios iops p50 p99 cpu_us accel
    accel=$(run_accel "$out")
    ios=$(grep -o 'issued rwts: total=[0-9]*' "$out" | head -1 | grep -o '[0-9]*$')
    iops=$(grep -o 'read: IOPS=[0-9.k]*' "$out" | head -1 | sed 's/read: IOPS=//')
    p50=$(grep -o '50.00th=\[ *[0-9]*\]' "$out" | head -1 | grep -o '[0-9]*\]' | tr -d ']')
    p99=$(grep -o '99.00th=\[ *[0-9]*\]' "$out" | head -1 | grep -o '[0-9]*\]' | tr -d ']')
    local unit
    unit=$(grep -o 'clat percentiles ([mun]sec)' "$out" | head -1 | grep -o '[mun]sec' || true)
    cpu_us=$(awk -v t=$((t1 - t0)) -v hz="$hz" -v n="$ios" 'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "-" }')
    printf "%-9s %-8s %-8s %-6s %-9s %-12s %-12s %s\n" "$kind" "$depth" "$jobs" "$accel" "$iops" "$p50 $unit" \
        "$p99 $unit" "$cpu_us"
}

echo "fio randread 4k, $runtime s, $queues queues, null backends, packed=$packed; ACCEL: the accelerator each run's guest ran under"
printf "%-9s %-8s %-8s %-6s %-9s %-12s %-12s %s\n" BACKEND IODEPTH NUMJOBS ACCEL IOPS "CLAT-P50" "CLAT-P99" \
    "BACKEND-CPU-US/IO"
for spec in "64 2" "1 1"; do
    set -- $spec
    for kind in $backends; do
        run_one "$kind" "$1" "$2"
    done
done
