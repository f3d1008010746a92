#!/bin/bash
# Real-guest harness for Kickplug's vhost-user-blk backend: a Debian 12 cloud kernel and fio in a small
# initramfs, booted by QEMU with vhost-user-blk-pci on a Unix socket that Kickplug serves.
#
#   realguest.sh prepare CACHE
#       installs what is missing (qemu-system-x86, busybox-static, fio; apt-get update first when needed),
#       unpacks linux-image-cloud-amd64 with dpkg-deb -x (nothing goes to /boot) and builds CACHE/base.cpio.
#   realguest.sh run CACHE SOCKET JOBFILE [--queues N] [--event-idx on|off] [--poll-queues N] [--sum-mb M]
#                    [--passes N] [--wait-resize] [--reconnect SECONDS]
#                    [--queue-size N]   (vhost-user-blk queue-size, default 256)
#                    [--packed on|off]  (vhost-user-blk packed: the packed virtqueue, VIRTIO_F_RING_PACKED; default off)
#                    [--smp N]          (vCPUs, default 2; virtio_blk gives a guest at most one queue per vCPU, so a
#                                        run of one queue can take 1: one vCPU thread fewer on a busy host)
#                    [--mem SIZE]       (guest memory, default 1G; a live-migration test keeps it small)
#                    [--disk2 SOCKET]   (a second vhost-user-blk disk, /dev/vdb: one queue, packed=on)
#                    [--qmp PATH]       (QMP on that Unix socket, for migrate and query-migrate)
#                    [--incoming URI]   (the destination of a live migration: -incoming URI, e.g. unix:PATH; the
#                                        guest's serial console continues on this QEMU's stdio)
#                    [--paused]         (-S: the guest does not run until QMP cont; a live migration's destination
#                                        whose memory a test compares with the paused source's first)
#                    [--rg-file PATH]   (one more file in the guest's /rg, repeatable: /rg/steps and its NAME.fio
#                                        jobs select /init's step mode, one job per RG-STEP-READY and line on stdin;
#                                        a step with a NAME.sh instead runs that shell script)
#       appends JOBFILE as /rg/job.fio and execs QEMU (so killing the process kills QEMU). The guest prints
#       RG-* lines on the serial console (stdout): RG-FIO-EXIT=<status>, RG-SUM=<md5 of the first M MiB of
#       /dev/vda>, RG-KERNEL-ERROR: <line> for every virtio or I/O error in its kernel log, RG-DONE.
#       --passes N runs the job up to N times (RG-PASS k exit=S each) until a line arrives on QEMU's stdin;
#       --wait-resize then waits for /sys/block/vda/size to change (RG-RESIZE-WAIT, RG-RESIZE-SEEN size=S);
#       --reconnect S makes QEMU's chardev reconnect to a back-end that went away (reconnect=S).
#
# Facts this follows: ../../../../shared/notes/real-guest-facts.md (TCG unless /proc/cpuinfo has vmx/svm,
# -cpu Nehalem, clocksource=tsc, modules loaded by hand in dependency order, 4-byte aligned appended cpio).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
die() { echo "RG-HARNESS-ERROR: $*" >&2; exit 2; }

prepare() {
    mkdir -p "$1"
    local cache
    cache=$(cd "$1" && pwd)
    local missing=()
    command -v qemu-system-x86_64 >/dev/null || missing+=(qemu-system-x86)
    command -v fio >/dev/null || missing+=(fio)
    if ! [ -x /bin/busybox ] || ldd /bin/busybox >/dev/null 2>&1; then
        missing+=(busybox-static)   # the initramfs needs a static busybox
    fi
    if [ ${#missing[@]} -gt 0 ]; then
        echo "RG: installing ${missing[*]}"
        [ "$(id -u)" = 0 ] || die "missing packages ${missing[*]} and not root: install them first"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -q >"$cache/apt-update.log" 2>&1 || die "apt-get update failed (see $cache/apt-update.log)"
        apt-get install -y -q --no-install-recommends "${missing[@]}" >"$cache/apt-install.log" 2>&1 \
            || die "apt-get install ${missing[*]} failed (see $cache/apt-install.log)"
    fi

    if ! [ -f "$cache/vmlinuz" ] || ! [ -d "$cache/modules" ]; then
        local pkg
        pkg=$(apt-cache depends linux-image-cloud-amd64 2>/dev/null | awk '/Depends: linux-image-/{print $2; exit}' || true)
        if [ -z "$pkg" ]; then
            apt-get update -q >"$cache/apt-update.log" 2>&1 || die "apt-get update failed (see $cache/apt-update.log)"
            pkg=$(apt-cache depends linux-image-cloud-amd64 | awk '/Depends: linux-image-/{print $2; exit}')
        fi
        [ -n "$pkg" ] || die "cannot find the kernel package behind linux-image-cloud-amd64"
        rm -rf "$cache/deb" && mkdir -p "$cache/deb"
        (cd "$cache/deb" && apt-get download "$pkg" >"$cache/apt-download.log" 2>&1) \
            || die "apt-get download $pkg failed (see $cache/apt-download.log)"
        dpkg-deb -x "$cache"/deb/*.deb "$cache/deb/root"
        local kver
        kver=$(ls "$cache/deb/root/lib/modules" | head -1)
        cp "$cache/deb/root/boot/vmlinuz-$kver" "$cache/vmlinuz"
        # The kernel's symbols, for reading a stalled guest's instruction pointers (QEMU's monitor) with nokaslr.
        cp "$cache/deb/root/boot/System.map-$kver" "$cache/System.map" 2>/dev/null || true
        mkdir -p "$cache/modules"
        for m in virtio/virtio_ring virtio/virtio virtio/virtio_pci_modern_dev virtio/virtio_pci_legacy_dev \
                 virtio/virtio_pci block/virtio_blk; do
            cp "$cache/deb/root/lib/modules/$kver/kernel/drivers/$m.ko" "$cache/modules/"
        done
        echo "$kver" >"$cache/kernel-version"
        rm -rf "$cache/deb"
    fi

    # Rebuilt when /init or the host's fio or busybox change.
    local stamp
    stamp=$(cat "$here/init" "$(command -v fio)" /bin/busybox | md5sum | cut -c1-32)
    if ! [ -f "$cache/base.cpio" ] || [ "$(cat "$cache/base.stamp" 2>/dev/null)" != "$stamp" ]; then
        local root=$cache/initramfs
        rm -rf "$root" && mkdir -p "$root"/{bin,dev,proc,sys,rg,lib/modules,tmp}
        cp /bin/busybox "$root/bin/busybox"
        cp "$cache"/modules/*.ko "$root/lib/modules/"
        cp "$(command -v fio)" "$root/bin/fio"
        # fio and every shared library it needs (Debian's fio pulls in about 60).
        ldd "$(command -v fio)" | awk '/=> \//{print $3} /^[ \t]*\//{print $1}' | sort -u | while read -r lib; do
            mkdir -p "$root$(dirname "$lib")"
            cp -L "$lib" "$root$lib"
        done
        cp "$here/init" "$root/init"
        chmod 755 "$root/init"
        (cd "$root" && find . | busybox cpio -o -H newc -R 0:0 >"$cache/base.cpio.tmp" 2>/dev/null)
        mv "$cache/base.cpio.tmp" "$cache/base.cpio"
        echo "$stamp" >"$cache/base.stamp"
        rm -rf "$root"
    fi
    echo "RG-PREPARED kernel=$(cat "$cache/kernel-version") initramfs=$(stat -c %s "$cache/base.cpio")"
}

run() {
    local cache socket=$2 job=$3
    cache=$(cd "$1" && pwd)
    shift 3
    local queues=1 eventidx=on pollq=0 summb=32 passes=1 waitresize=0 reconnect="" qsize=256 packed=off smp=2
    local mem=1G extra=() rgfiles=()
    while [ $# -gt 0 ]; do
        case $1 in
            --queues) queues=$2; shift 2 ;;
            --event-idx) eventidx=$2; shift 2 ;;
            --poll-queues) pollq=$2; shift 2 ;;
            --sum-mb) summb=$2; shift 2 ;;
            --passes) passes=$2; shift 2 ;;
            --wait-resize) waitresize=1; shift ;;
            --reconnect) reconnect=",reconnect=$2"; shift 2 ;;
            --queue-size) qsize=$2; shift 2 ;;
            --packed) packed=$2; shift 2 ;;
            --smp) smp=$2; shift 2 ;;
            --mem) mem=$2; shift 2 ;;
            --disk2) extra+=(-chardev socket,id=c1,path="$2"
                             -device vhost-user-blk-pci,chardev=c1,num-queues=1,queue-size="$qsize",packed=on); shift 2 ;;
            --qmp) extra+=(-qmp "unix:$2,server=on,wait=off"); shift 2 ;;
            --incoming) extra+=(-incoming "$2"); shift 2 ;;
            --paused) extra+=(-S); shift ;;
            --rg-file) rgfiles+=("$2"); shift 2 ;;
            *) die "unknown option $1" ;;
        esac
    done
    [ -f "$cache/base.cpio" ] || die "run 'prepare $cache' first"
    find "$cache" -maxdepth 1 -name 'run.*' -mmin +10 -exec rm -rf {} + 2>/dev/null || true
    local work
    work=$(mktemp -d "$cache/run.XXXXXX")
    mkdir -p "$work/rg"
    cp "$job" "$work/rg/job.fio"
    [ ${#rgfiles[@]} = 0 ] || cp "${rgfiles[@]}" "$work/rg/"
    (cd "$work" && find rg | busybox cpio -o -H newc -R 0:0 >"$work/job.cpio" 2>/dev/null)
    # The kernel only sees an appended archive that starts on a 4-byte boundary.
    cp "$cache/base.cpio" "$work/initrd"
    local size pad
    size=$(stat -c %s "$work/initrd")
    pad=$(( (4 - size % 4) % 4 ))
    [ "$pad" = 0 ] || head -c "$pad" /dev/zero >>"$work/initrd"
    cat "$work/job.cpio" >>"$work/initrd"

    # RG_TCG_THREAD=single: single-threaded TCG (one host thread for all vCPUs) instead of one thread per vCPU.
    local accel=(-accel tcg,thread="${RG_TCG_THREAD:-multi}" -cpu Nehalem)
    if grep -qwE 'vmx|svm' /proc/cpuinfo && [ -w /dev/kvm ]; then
        accel=(-accel kvm -cpu host)
    fi
    local blkparams=""
    [ "$pollq" = 0 ] || blkparams="poll_queues=$pollq"
    # RG_MONITOR=PATH: QEMU's human monitor on that Unix socket (a test reads the virtqueue state when the
    # guest stalls: info virtio-queue-status); none otherwise.
    local monitor=(-monitor none)
    [ -z "${RG_MONITOR:-}" ] || monitor=(-monitor "unix:$RG_MONITOR,server=on,wait=off")
    # Under TCG the guest's clocks (TSC, PIT, HPET, PM timer, LAPIC timer) all follow the host's real time, so a
    # vCPU thread the busy host does not run for a while looks to the guest like a CPU that stopped. The kernel's
    # boot-time check that the timer interrupt works (timer_irq_works: more than 4 PIT ticks during a TSC delay
    # loop) then fails and it panics with "IO-APIC + timer doesn't work!" (seen here in 1 of 4 boots with both
    # cores busy). no_timer_check skips that check: QEMU's timer is known to work.
    local timing="no_timer_check"
    # For the same reason the guest's soft-lockup watchdog and RCU stall detector report a vCPU the host did not run
    # for 20 s or more as a CPU stuck in the kernel, with a call trace (seen in BackendCrashIT at load 30-40: "soft
    # lockup - CPU#0 stuck for 28s! [swapper/0:0]", "rcu_preempt kthread starved"), which the init's error filter
    # then counts as a guest error. Neither says anything about the disk: nowatchdog and rcu_cpu_stall_suppress turn
    # them off. The hung-task detector stays on: a task blocked on the disk is what the filter is for.
    timing="$timing nowatchdog rcupdate.rcu_cpu_stall_suppress=1"
    # RG_APPEND: more kernel parameters (a test that reads a stalled guest's registers passes nokaslr, so that the
    # addresses match CACHE/System.map).
    [ -z "${RG_APPEND:-}" ] || timing="$timing $RG_APPEND"
    echo "RG: booting (queues=$queues event_idx=$eventidx poll_queues=$pollq queue_size=$qsize packed=$packed smp=$smp ${accel[*]})"
    # This run's initrd copy is removed by a later run (after 10 minutes).
    exec qemu-system-x86_64 -nodefaults -no-user-config -machine q35 "${accel[@]}" -smp "$smp" -m "$mem" \
        -object memory-backend-memfd,id=mem,size="$mem",share=on -numa node,memdev=mem \
        -chardev socket,id=c0,path="$socket""$reconnect" \
        -device vhost-user-blk-pci,chardev=c0,num-queues="$queues",queue-size="$qsize",event_idx="$eventidx",packed="$packed" \
        -kernel "$cache/vmlinuz" -initrd "$work/initrd" \
        -append "console=ttyS0 mitigations=off clocksource=tsc tsc=reliable $timing quiet panic=-1 rg.blk=$blkparams rg.summb=$summb rg.passes=$passes rg.waitresize=$waitresize" \
        "${extra[@]}" -display none -serial stdio "${monitor[@]}" -no-reboot
}

cmd=${1:-}
shift || true
case $cmd in
    prepare) prepare "$@" ;;
    run) run "$@" ;;
    *) die "usage: $0 prepare CACHE | run CACHE SOCKET JOBFILE [options]" ;;
esac
