#!/usr/bin/env bash
# The programs Kickplug's tests run beside the JVM, installed when missing: `mvn -B verify` runs this once, at
# the start of the build (the root pom, phase validate), so a machine without them stops at once with one line
# instead of failing deep inside a test.
#
#   qemu-nbd (qemu-utils), nbdkit          the NBD backend's tests start real NBD servers
#   qemu-img, qemu-io (qemu-utils),         the NBD export's tests run real NBD clients against it
#   nbdcopy, nbdinfo (libnbd-bin)
#   qemu-system-x86_64, fio, busybox-static the real-guest tests boot a Linux guest with fio in its initramfs
#   ceph-mon, ceph-osd, ceph-mgr,          the RBD backend's tests start a one-node Ceph cluster
#   ceph-common (rbd), librbd1              (scripts/micro-ceph.sh) and reach it through librbd
#   qemu-block-extra                        qemu-storage-daemon's rbd driver, beside kickplugd's (QsdCommandLineIT)
#
# As root, what is missing is installed with apt-get. Otherwise the script prints one line naming the packages
# and exits 2. `-Dkickplug.prerequisites.skip=true` (or -DskipTests) leaves the check out.
#
#   scripts/test-prerequisites.sh           check, install as root
#   scripts/test-prerequisites.sh --check   check only: print what is missing, exit 2 if anything is
set -euo pipefail

check_only=false
[ "${1:-}" = "--check" ] && check_only=true

missing=()
need() {  # need PACKAGE TEST...: PACKAGE is missing when a TEST fails
    local pkg=$1; shift
    for t in "$@"; do
        if ! eval "$t" >/dev/null 2>&1; then
            missing+=("$pkg")
            return
        fi
    done
}
need qemu-utils 'command -v qemu-nbd' 'command -v qemu-img' 'command -v qemu-io'
need nbdkit 'command -v nbdkit'
need libnbd-bin 'command -v nbdcopy' 'command -v nbdinfo'
need qemu-system-x86 'command -v qemu-system-x86_64'
need fio 'command -v fio'
# The guest's initramfs needs a static busybox (ldd fails on a static binary).
need busybox-static 'test -x /bin/busybox' '! ldd /bin/busybox'
need ceph-mon 'command -v ceph-mon'
need ceph-osd 'command -v ceph-osd'
need ceph-mgr 'command -v ceph-mgr'
need ceph-common 'command -v rbd' 'command -v ceph'
need librbd1 'ldconfig -p | grep -q "librbd\.so\.1 "'
need qemu-block-extra 'ls /usr/lib/*/qemu/block-rbd.so'

[ ${#missing[@]} -eq 0 ] && exit 0

if $check_only || [ "$(id -u)" != 0 ]; then
    echo "kickplug tests need: ${missing[*]} (as root: apt-get install ${missing[*]}; or run the tests as root, which installs them)" >&2
    exit 2
fi

echo "kickplug tests: installing ${missing[*]}" >&2
log=$(mktemp "${TMPDIR:-/tmp}/kickplug-apt-XXXXXX.log")
export DEBIAN_FRONTEND=noninteractive
if ! { apt-get -o DPkg::Lock::Timeout=300 update -q && apt-get -o DPkg::Lock::Timeout=300 install -y -q --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
    echo "kickplug tests: apt-get install ${missing[*]} failed (see $log)" >&2
    exit 2
fi
rm -f "$log"
