#!/bin/bash
# Benchmark (not a test): the same Linux guest and fio job against Kickplug's vhost-user-blk export and
# against qemu-storage-daemon's, in one run, point by point. Prints, per run, IOPS, completion-latency
# percentiles and the backend process's CPU time per I/O (utime+stime from /proc/PID/stat, sampled when the
# guest starts and ends fio), then per point the medians and the Kickplug/QSD ratios.
#
#   bench.sh [--runtime SECONDS] [--runs N] [--queues N] [--packed on|off] [--backends "kickplug qsd"]
#            [--launcher kickplugd|jar] [--disks "null file"] [--workloads "1x1 64x4"] [--warmup SECONDS]
#            [--threads]
#
# --launcher: how Kickplug starts: kickplugd (the default: distribution/target/kickplugd, the service launcher
# with its JVM flags, as docs/service.md tells operators to run it) or jar (java -jar kickplug.jar --daemon
# with the JVM's defaults). --disks: null (null-co,read-zeroes=off on both) and/or file (a 1 GiB raw image
# written first, so the page cache holds it; Kickplug's file backend, QSD's file driver with aio=threads).
# --workloads: IODEPTHxNUMJOBS of fio randread 4k (one job per queue up to --queues). --runs: runs per point,
# the servers alternating within each run; the summary takes medians. --warmup (default 3): fio runs the same
# I/O for that long first, and the CPU, IOPS and latencies are those of the measured job after it (each run
# starts a fresh server, whose JIT would otherwise compile the request path inside the measured window; a
# daemon serves for hours). --warmup 0: measured from fio's start. The WITHOUT-JIT column leaves out the CPU of
# the JIT's compiler threads in the window (still compiling after a short warm-up at a TCG guest's rates).
# --threads: under each run, the server's five threads (by name) that used the most CPU in the window.
# --packed on boots QEMU with packed=on on its vhost-user-blk-pci device: Kickplug serves packed rings,
# qemu-storage-daemon does not offer VIRTIO_F_RING_PACKED and its guest runs split rings (the PACKED column
# says what the guest asked for). --backends picks which of the two run.
#
# Needs: distribution/target/kickplug.jar and kickplugd (mvn -B install -DskipTests) and the real-guest cache
# (realguest.sh prepare bundles/vhost-user/target/realguest). The guest runs under KVM when the CPU has
# vmx/svm and /dev/kvm is writable, under TCG otherwise; each row's ACCEL column is the accelerator that
# run's QEMU was started with and completed under (read from its boot line, not guessed from the CPU), so
# under TCG absolute numbers are those of an emulated guest; compare the two backends within one run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/bench-lib.sh"
kickplugd=$root/distribution/target/kickplugd
runtime=10
warmup=3
threads=""
runs=1
queues=2
packed=off
backends="kickplug qsd"
launcher=kickplugd
disks=null
workloads="64x2 1x1"
while [ $# -gt 0 ]; do
    case $1 in
        --runtime) runtime=$2; shift 2 ;;
        --runs) runs=$2; shift 2 ;;
        --warmup) warmup=$2; shift 2 ;;
        --threads) threads=1; shift ;;
        --queues) queues=$2; shift 2 ;;
        --packed) packed=$2; shift 2 ;;
        --backends) backends=${2//,/ }; shift 2 ;;
        --launcher) launcher=$2; shift 2 ;;
        --disks) disks=${2//,/ }; shift 2 ;;
        --workloads) workloads=${2//,/ }; shift 2 ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
case $launcher in
    kickplugd) [ -f "$kickplugd" ] || { echo "build the distribution first: $kickplugd is missing" >&2; exit 2; } ;;
    jar) [ -f "$jar" ] || { echo "build the distribution first: $jar is missing" >&2; exit 2; } ;;
    *) echo "--launcher: kickplugd or jar, not $launcher" >&2; exit 2 ;;
esac
for d in $disks; do
    case $d in null | file) ;; *) echo "--disks: null and/or file, not $d" >&2; exit 2 ;; esac
done
for w in $workloads; do
    [[ $w =~ ^[1-9][0-9]*x[1-9][0-9]*$ ]] || { echo "--workloads: IODEPTHxNUMJOBS (e.g. 64x4), not $w" >&2; exit 2; }
done
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "--runs: a positive count, not $runs" >&2; exit 2; }
[[ $warmup =~ ^[0-9]+$ ]] || { echo "--warmup: seconds, not $warmup" >&2; exit 2; }
begin_marker=RG-FIO-BEGIN
end_marker=RG-FIO-EXIT
[ "$warmup" -eq 0 ] || { begin_marker=RG-MEASURE-BEGIN; end_marker=RG-MEASURE-END; }
bash "$here/realguest.sh" prepare "$cache" >/dev/null
command -v qemu-storage-daemon >/dev/null || { echo "qemu-storage-daemon is missing (package qemu-system-common)" >&2; exit 2; }

bench_work kp-bench
hz=$(getconf CLK_TCK)
size=$((1 << 30))
image=""
case " $disks " in
    *" file "*)
        image=$work/disk.img
        # Written, not sparse: both servers then read the same cached pages.
        dd if=/dev/zero of="$image" bs=1M count=$((size >> 20)) status=none
        ;;
esac

cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

# Per thread of PID: "TID<TAB>NAME<TAB>utime+stime ticks" (the name is what is between the stat line's parentheses).
thread_ticks() {
    local f line
    for f in /proc/"$1"/task/*/stat; do
        line=$(cat "$f" 2>/dev/null) || continue
        local name=${line#*(}
        name=${name%)*}
        local rest=${line##*) }
        set -- $rest
        printf "%s\t%s\t%s\n" "${f//[!0-9]/}" "$name" $((${12} + ${13}))
    done
}

# The JIT compiler threads' CPU ticks between two thread_ticks files (HotSpot's "C1 CompilerThre...", "C2 ...").
jit_ticks() { # before after
    awk -F'\t' 'NR == FNR { before[$1] = $3; next }
        $2 ~ /^C[12] CompilerThre/ { used += $3 - (($1 in before) ? before[$1] : 0) }
        END { print used + 0 }' "$1" "$2"
}

# The threads that used the most CPU between two thread_ticks files, as "NAME MS, ...", threads of one name
# summed (a thread started inside the window counts from 0).
thread_top() { # before after
    awk -F'\t' -v hz="$hz" 'NR == FNR { before[$1] = $3; next }
        { used[$2] += $3 - (($1 in before) ? before[$1] : 0) }
        END { for (n in used) if (used[n] > 0) printf "%d\t%s\n", used[n] * 1000 / hz, n }' "$1" "$2" |
        sort -rn | head -5 | awk -F'\t' '{ printf "%s%s %s ms", (NR > 1 ? ", " : ""), $2, $1 }'
}

start_backend() { # kind socket disk
    local kind=$1 sock=$2 img=""
    [ "$3" = file ] && img=$image
    rm -f "$sock"
    case $kind in
        kickplug)
            serve_gosh "$sock" "$img"
            if [ "$launcher" = kickplugd ]; then
                # Its own state folder, fresh each run, as a new daemon starts.
                sh "$kickplugd" --state "$work/state-$$-$RANDOM" -f "$work/serve.gosh" >"$work/backend.log" 2>&1 &
            else
                java -jar "$jar" --daemon -f "$work/serve.gosh" >"$work/backend.log" 2>&1 &
            fi
            ;;
        qsd)
            start_qsd "$sock" "$work/backend.log" "$img"
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

# fio's IOPS as a number ("12.3k" -> 12300).
iops_number() {
    awk -v v="$1" 'BEGIN { m = 1; if (v ~ /k$/) { m = 1000; sub(/k$/, "", v) } else if (v ~ /M$/) { m = 1000000; sub(/M$/, "", v) }
        printf "%.0f", v * m }'
}

# CPU microseconds per I/O of TICKS clock ticks over IOS I/Os ("-" without I/O).
us_per_io() { # ticks ios
    awk -v t="$1" -v hz="$hz" -v n="$2" 'BEGIN { if (n > 0) printf "%.1f", t * 1e6 / hz / n; else print "-" }'
}

results=$work/results.tsv
: >"$results"

run_one() { # kind disk iodepth numjobs run
    local kind=$1 disk=$2 depth=$3 jobs=$4 run=$5 sock=$work/$1.sock
    randread_job "$depth" "$jobs" randread "$warmup"
    start_backend "$kind" "$sock" "$disk"
    local t0="" t1="" out=$work/guest.log
    : >"$out"
    while IFS= read -r line; do
        echo "$line" >>"$out"
        # The window's first start and first end (each of numjobs prints its own marker).
        case $line in
            "$begin_marker"*) [ -n "$t0" ] || { t0=$(cpu_ticks "$backend_pid"); thread_ticks "$backend_pid" >"$work/threads0"; } ;;
            "$end_marker"*) [ -n "$t1" ] || { t1=$(cpu_ticks "$backend_pid"); thread_ticks "$backend_pid" >"$work/threads1"; } ;;
        esac
    done < <(bash "$here/realguest.sh" run "$cache" "$sock" "$work/job.fio" --queues "$queues" --packed "$packed" --sum-mb 1 2>&1)
    kill "$backend_pid" 2>/dev/null || true
    wait "$backend_pid" 2>/dev/null || true
    backend_pid=""
    if ! grep -q 'RG-FIO-EXIT=0' "$out" || [ -z "$t0" ] || [ -z "$t1" ]; then
        echo "run $kind disk=$disk iodepth=$depth numjobs=$jobs failed:" >&2
        tail -40 "$out" >&2
        return 1
    fi
    local ios iops p50 p99 cpu_us accel
    accel=$(run_accel "$out")
    # The measured job's group is fio's last report (the warm-up's, when there is one, comes first).
    ios=$(grep -o 'issued rwts: total=[0-9]*' "$out" | tail -1 | grep -o '[0-9]*$')
    iops=$(grep -o 'read: IOPS=[0-9.kM]*' "$out" | tail -1 | sed 's/read: IOPS=//')
    p50=$(grep -o '50.00th=\[ *[0-9]*\]' "$out" | tail -1 | grep -o '[0-9]*\]' | tr -d ']')
    p99=$(grep -o '99.00th=\[ *[0-9]*\]' "$out" | tail -1 | grep -o '[0-9]*\]' | tr -d ']')
    local unit
    unit=$(grep -o 'clat percentiles ([mun]sec)' "$out" | tail -1 | grep -o '[mun]sec' || true)
    cpu_us=$(us_per_io $((t1 - t0)) "$ios")
    # Without the JIT's compiler threads: what the server costs once its code is compiled (a daemon serves for
    # hours; each run here starts a fresh one).
    local jit nojit_us
    jit=$(jit_ticks "$work/threads0" "$work/threads1")
    nojit_us=$(us_per_io $((t1 - t0 - jit)) "$ios")
    printf "%-4s %-9s %-5s %-8s %-8s %-6s %-9s %-12s %-12s %-17s %s\n" "$run" "$kind" "$disk" "$depth" "$jobs" "$accel" \
        "$iops" "$p50 $unit" "$p99 $unit" "$cpu_us" "$nojit_us"
    [ -z "$threads" ] || echo "     threads: $(thread_top "$work/threads0" "$work/threads1")"
    printf "%s\t%s\t%s\t%s\t%s\t%s\n" "$disk" "${depth}x$jobs" "$kind" "$(iops_number "$iops")" "$cpu_us" "$nojit_us" \
        >>"$results"
}

kname=$launcher
[ "$launcher" = jar ] && kname="java -jar"
echo "fio randread 4k, $runtime s after $warmup s of warm-up, $queues queues, packed=$packed, Kickplug started by $kname, $runs run(s) per point;" \
    "ACCEL: the accelerator each run's guest ran under; load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
printf "%-4s %-9s %-5s %-8s %-8s %-6s %-9s %-12s %-12s %-17s %s\n" RUN BACKEND DISK IODEPTH NUMJOBS ACCEL IOPS "CLAT-P50" \
    "CLAT-P99" "BACKEND-CPU-US/IO" "WITHOUT-JIT"
for disk in $disks; do
    for w in $workloads; do
        for run in $(seq "$runs"); do
            # The servers alternate which goes first, so neither always runs on the warmer machine.
            order=$backends
            [ $((run % 2)) -eq 0 ] && order=$(echo "$backends" | awk '{for (i = NF; i > 0; i--) printf "%s%s", $i, (i > 1 ? " " : "")}')
            for kind in $order; do
                run_one "$kind" "$disk" "${w%x*}" "${w#*x}" "$run"
            done
        done
    done
done

echo
echo "Medians of $runs run(s) per point; kp/qsd: Kickplug's median over qemu-storage-daemon's; -NOJIT: CPU per I/O without"
echo "the JIT compiler threads' CPU (HotSpot's C1 and C2 threads; QSD has none)"
awk -F'\t' '
    function median(key,   n, i, j, t, a) {
        n = split(vals[key], a, " ")
        for (i = 2; i <= n; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] + 0 > t + 0; j--) a[j + 1] = a[j]; a[j + 1] = t }
        return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
    }
    function med(p, kind, col) { return (p SUBSEP kind SUBSEP col) in vals ? median(p SUBSEP kind SUBSEP col) : "" }
    function ratio(a, b) { return (a != "" && b > 0) ? sprintf("%.2fx", a / b) : "-" }
    { k = $1 SUBSEP $2 SUBSEP $3; vals[k SUBSEP "i"] = vals[k SUBSEP "i"] " " $4; vals[k SUBSEP "c"] = vals[k SUBSEP "c"] " " $5
      vals[k SUBSEP "n"] = vals[k SUBSEP "n"] " " $6
      if (!(($1 SUBSEP $2) in seen)) { seen[$1 SUBSEP $2] = 1; order[++np] = $1 SUBSEP $2 } }
    END {
        printf "%-5s %-8s %-9s %-9s %-10s %-10s %-9s %-10s %-9s %s\n", "DISK", "WORKLOAD", "KP-IOPS", "QSD-IOPS", "KP-CPU/IO",
            "QSD-CPU/IO", "KP-NOJIT", "IOPS-RATIO", "CPU-RATIO", "NOJIT-RATIO"
        for (p = 1; p <= np; p++) {
            split(order[p], pk, SUBSEP)
            ki = med(order[p], "kickplug", "i"); kc = med(order[p], "kickplug", "c"); kn = med(order[p], "kickplug", "n")
            qi = med(order[p], "qsd", "i"); qc = med(order[p], "qsd", "c")
            printf "%-5s %-8s %-9s %-9s %-10s %-10s %-9s %-10s %-9s %s\n", pk[1], pk[2], ki, qi, kc, qc, kn,
                ratio(ki, qi), ratio(kc, qc), ratio(kn, qc)
        }
    }' "$results"
