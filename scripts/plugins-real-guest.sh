#!/bin/bash
# The example plugins under a real QEMU guest over vhost-user, in one boot (docs/plugin-guide.md, "Under a real
# guest"). Not part of `mvn -B verify`: run it by hand after building the distribution and the example jars.
#
#   scripts/plugins-real-guest.sh [CACHE]     (CACHE: the real-guest harness's kernel and initramfs, default
#                                              /var/tmp/kp-guest; prepared when missing, apt-get as root)
#
# A daemon with a control socket attaches d0 (memory, 2 queues) and exports it over vhost-user. Over the control
# socket: kp:install of both example jars, kp:notify d0 coalesce. The guest (realguest.sh's step mode) runs
#   verify0  fio randwrite with crc32c verify at QD32 under immediate: must pass;
#   verify1  (kp:notify d0 coalesce) fio randwrite with crc32c verify at QD32 (coalesce:config d0 iops_threshold=1000): must pass;
#            kp:stats d0 then shows coalesce's requests per interrupt;
#   errors   after `error:config d0 error=EIO error-pwrite-rate=1%`: fio randwrite with continue_on_error=write
#            must count about 1% of its writes as failed, with EIO (errno 5);
#   verify2  after `error:config d0 clear`: fio verify must pass again;
# and prints its kernel log's I/O errors (they must name vda). Every wait is bounded (KP_STEP_TIMEOUT, default
# 300 s, and KP_BOOT_TIMEOUT, default 600 s); the script ends with PLUGINS-REAL-GUEST OK or FAILED: reason.
# Each run's files (daemon log, console, statements' output) stay in target/plugins-real-guest/<time>/.
set -u

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
cache=${1:-/var/tmp/kp-guest}
jar=distribution/target/kickplug.jar
harness=bundles/vhost-user/src/test/realguest/realguest.sh
coalesce=$(ls sdk/examples/target/it/coalesce/target/kickplug-example-coalesce-*.jar 2>/dev/null | grep -v sources | head -1)
error=$(ls sdk/examples/target/it/error/target/kickplug-example-error-*.jar 2>/dev/null | grep -v sources | head -1)
step_timeout=${KP_STEP_TIMEOUT:-300}
boot_timeout=${KP_BOOT_TIMEOUT:-600}
out=$root/target/plugins-real-guest/$(date -u +%Y%m%dT%H%M%SZ)
mkdir -p "$out"
start=$(date +%s)
daemon="" qemu=""

log() { echo "[$(( $(date +%s) - start ))s] $*"; }
fail() {
    log "PLUGINS-REAL-GUEST FAILED: $*"
    echo "files: $out"
    finish 1
}
finish() {
    # Stops what this script started, by process id.
    [ -z "$qemu" ] || kill "$qemu" 2>/dev/null
    [ -z "$daemon" ] || kill "$daemon" 2>/dev/null     # SIGTERM: the daemon stops cleanly
    [ -z "$qemu" ] || wait "$qemu" 2>/dev/null
    [ -z "$daemon" ] || wait "$daemon" 2>/dev/null
    exec 3>&- 2>/dev/null
    exit "$1"
}
trap 'fail interrupted' INT TERM

[ -f "$jar" ] || fail "no $jar: mvn -B -DskipTests package first"
[ -n "$coalesce" ] && [ -n "$error" ] || fail "no example jars in sdk/examples/target/it/*/target: build sdk/examples first"

bash "$harness" prepare "$cache" >"$out/prepare.log" 2>&1 || fail "the harness could not prepare $cache (see $out/prepare.log)"

ctl=$out/control.sock sock=$out/vhost.sock
java -jar "$jar" --daemon --control "$ctl" \
    -c "kp:attach --queues 2 d0 256M" -c "kp:vhost d0 --socket $sock --queues 2" >"$out/daemon.log" 2>&1 &
daemon=$!
for _ in $(seq 120); do [ -S "$ctl" ] && [ -S "$sock" ] && break; kill -0 "$daemon" 2>/dev/null || break; sleep 0.5; done
[ -S "$ctl" ] && [ -S "$sock" ] || fail "the daemon did not open its sockets (see $out/daemon.log)"
log "daemon $daemon ready: d0 exported on $sock"

# One statement over the control socket, bounded; its output goes to $out/last.out and statements.log, and to
# the terminal unless -q.
kp() {
    local quiet=0
    [ "$1" != -q ] || { quiet=1; shift; }
    echo "kp> $*" >>"$out/statements.log"
    timeout 60 java -jar "$jar" --connect "$ctl" -c "$*" >"$out/last.out" 2>&1
    local s=$?
    cat "$out/last.out" >>"$out/statements.log"
    [ "$quiet" = 1 ] || { echo "kp> $*"; cat "$out/last.out"; }
    [ "$s" = 0 ] || fail "'$*' exited $s: $(cat "$out/last.out")"
}

kp "kp:install $root/$coalesce"
kp "kp:install $root/$error"
# A TCG guest does a few thousand IOPS, below SPDK's 60,000 default: a lower threshold makes coalesce delay.
kp "coalesce:config d0 iops_threshold=${KP_IOPS_THRESHOLD:-1000}"

for f in verify0 verify1 verify2; do
    cat >"$out/$f.fio" <<'JOB'
[global]
filename=/dev/vda
direct=1
ioengine=libaio
iodepth=32
bs=4k
size=64M
[verify]
rw=randwrite
verify=crc32c
do_verify=1
JOB
done
cat >"$out/errors.fio" <<'JOB'
[global]
filename=/dev/vda
direct=1
ioengine=libaio
iodepth=32
bs=4k
size=64M
[errors]
rw=randwrite
continue_on_error=write
JOB
printf 'verify0\nverify1\nerrors\nverify2\n' >"$out/steps"

mkfifo "$out/console.in"
bash "$harness" run "$cache" "$sock" "$out/verify1.fio" --queues 2 --event-idx off \
    --rg-file "$out/steps" --rg-file "$out/verify0.fio" --rg-file "$out/verify1.fio" --rg-file "$out/errors.fio" --rg-file "$out/verify2.fio" \
    <"$out/console.in" >"$out/console.log" 2>&1 &
qemu=$!          # the harness execs QEMU
exec 3>"$out/console.in"
log "guest booting (QEMU $qemu), console in $out/console.log"

# The console so far, without the serial line's carriage returns.
console() { tr -d '\r' <"$out/console.log"; }
# Waits for a console line matching $1 for at most $2 seconds; prints it.
await() {
    local deadline=$(( $(date +%s) + $2 ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        if console | grep -m1 -E "$1"; then return 0; fi
        kill -0 "$qemu" 2>/dev/null || { console | grep -m1 -E "$1" && return 0; fail "QEMU ended before '$1'"; }
        sleep 0.5
    done
    fail "no '$1' within $2 s: a hang (see $out/console.log)"
}
step_result() {
    console | grep -E "^RG-STEP-OUT $1 fio:|^RG-STEP-EXIT $1=|^RG-STEP-IRQS $1 " | head -8
    # terse v3 (fio(1), TERSE OUTPUT): field 3 the job's name, field 5 its error (an errno, 0 for none)
    console | grep -E "^RG-STEP-OUT $1 3;" | sed "s/^RG-STEP-OUT $1 //" \
        | awk -F';' '{ printf "fio job %s: error=%s\n", $3, $5 }'
}

# The export's requests and interrupts so far, summed over the queues of kp:stats' vhost-user table (requests in
# column 3, irqs in column 7), and the strategy of its queue 0: sets req, irq and strategy.
export_counts() {
    kp -q "kp:stats d0"
    read -r req irq strategy <<<"$(awk '/^vhost-user export$/ { on = 1 }
        on && /^ +[0-9]+ / { r += $3; i += $7; if ($1 == 0) s = $2 } END { print r + 0, i + 0, s }' "$out/last.out")"
}
# STEP: the step's requests and interrupts on the export (since the last export_counts) and their ratio.
per_request() {
    local r0=$req i0=$irq
    export_counts
    awk -v s="$1" -v st="$strategy" -v r=$(( req - r0 )) -v i=$(( irq - i0 )) \
        'BEGIN { printf "%s (%s): %d requests, %d interrupts, %.3f interrupts per request\n", s, st, r, i, r ? i / r : 0 }'
}

await '^RG-STEP-READY verify0' "$boot_timeout" >/dev/null
log "guest up: step verify0 (immediate)"
export_counts
echo go >&3
await '^RG-STEP-EXIT verify0=' "$step_timeout" >/dev/null
step_result verify0
console | grep -q '^RG-STEP-EXIT verify0=0$' || fail "fio verify failed under immediate"
per_request verify0

await '^RG-STEP-READY verify1' "$step_timeout" >/dev/null
kp "kp:notify d0 coalesce"
log "step verify1 (coalesce)"
export_counts
echo go >&3
await '^RG-STEP-EXIT verify1=' "$step_timeout" >/dev/null
step_result verify1
console | grep -q '^RG-STEP-EXIT verify1=0$' || fail "fio verify failed under coalesce"
per_request verify1
kp "kp:stats d0"

await '^RG-STEP-READY errors' "$step_timeout" >/dev/null
kp "error:config d0 'error=EIO' 'error-pwrite-rate=1%'"      # Gogo needs the quotes around a %
log "step errors (1% write errors, EIO)"
export_counts
echo go >&3
await '^RG-STEP-EXIT errors=' "$step_timeout" >/dev/null
step_result errors
per_request errors
# With continue_on_error fio runs the whole job and exits 0; its terse line ends with total_err;first_error.
errs=$(console | grep -E '^RG-STEP-OUT errors 3;' | awk -F';' '{ print $(NF-1), $NF, $5 }')
read -r total_err first_error error <<<"$errs"
echo "fio errors: total_err=${total_err:-?} first_error=${first_error:-?} (16,384 writes of 4 KiB)"
[ "${error:-}" = 5 ] && [ "${first_error:-}" = 5 ] || fail "fio's errors are not EIO (error=${error:-?})"
# 1% of 16,384 writes: 164 expected, sigma 12.7; 82..330 is more than 6 sigma on either side.
[ "${total_err:-0}" -ge 82 ] && [ "${total_err:-0}" -le 330 ] || fail "fio counted ${total_err:-0} write errors, not about 1%"
kp "kp:stats d0"
injected=$(grep -oE 'injected_pwrite=[0-9]+' "$out/last.out" | head -1 | cut -d= -f2)
[ "${injected:-x}" = "$total_err" ] || fail "the filter injected ${injected:-?} write errors, fio saw $total_err"
echo "every injected error reached fio once: injected_pwrite=$injected total_err=$total_err"

await '^RG-STEP-READY verify2' "$step_timeout" >/dev/null
kp "error:config d0 clear"
log "step verify2 (filter cleared)"
export_counts
echo go >&3
await '^RG-STEP-EXIT verify2=' "$step_timeout" >/dev/null
step_result verify2
per_request verify2
console | grep -q '^RG-STEP-EXIT verify2=0$' || fail "fio verify failed after the filter was cleared"

await '^RG-DONE' "$step_timeout" >/dev/null
console | grep -E '^RG-KERNEL-ERROR' | head -5
echo "... $(console | grep -cE '^RG-KERNEL-ERROR.*I/O error, dev vda') kernel lines 'I/O error, dev vda'"
console | grep -qE '^RG-KERNEL-ERROR.*I/O error, dev vda' || fail "the guest kernel logged no I/O error on vda"
for _ in $(seq 60); do kill -0 "$qemu" 2>/dev/null || break; sleep 0.5; done
kill -0 "$qemu" 2>/dev/null && fail "QEMU did not power off"
wait "$qemu"; qemu=""

kp "kp:uninstall io.kickplug.examples.error"
kp "kp:uninstall io.kickplug.examples.coalesce"
kp "kp:stats d0"
log "PLUGINS-REAL-GUEST OK"
echo "files: $out"
finish 0
