# Sourced by bench.sh and footprint.sh (benchmarks over the real-guest harness), after they set $here: the
# module tree's paths, and bench_work, the work folder removed at exit together with the backend process under
# measurement ($backend_pid, when set).
root=$(cd "$here/../../../../.." && pwd)
cache=$root/bundles/vhost-user/target/realguest
jar=$root/distribution/target/kickplug.jar

bench_cleanup() {
    [ -z "$backend_pid" ] || kill "$backend_pid" 2>/dev/null || true
    rm -rf "$work"
}

# bench_work PREFIX: makes $work (/tmp/PREFIX.XXXXXX) and removes it at exit.
bench_work() {
    work=$(mktemp -d "/tmp/$1.XXXXXX")
    backend_pid=""
    trap bench_cleanup EXIT
}

# serve_gosh SOCKET [IMAGE]: writes $work/serve.gosh, Kickplug's export over vhost-user at SOCKET with $queues
# queues of one disk: a null disk of $size bytes, or the raw IMAGE file when given.
serve_gosh() {
    local attach="kp:attach --queues $queues --iothreads 1 --backend null d0 $size"
    [ -z "${2:-}" ] || attach="kp:attach --queues $queues --iothreads 1 --backend file --file $2 d0"
    cat >"$work/serve.gosh" <<GOSH
$attach
kp:vhost d0 --socket $1 --queues $queues
GOSH
}

# start_qsd SOCKET LOG [IMAGE]: starts qemu-storage-daemon in the background (its pid in $!) with the same
# export (a file IMAGE through the page cache with aio=threads, as Kickplug's file backend reads it).
start_qsd() {
    local blockdev="driver=null-co,node-name=n0,size=$size,read-zeroes=off"
    [ -z "${3:-}" ] || blockdev="driver=file,node-name=n0,filename=$3,aio=threads,cache.direct=off"
    qemu-storage-daemon --blockdev "$blockdev" \
        --export type=vhost-user-blk,id=e0,node-name=n0,addr.type=unix,addr.path="$1",writable=on,num-queues=$queues \
        >"$2" 2>&1 &
}

# randread_job IODEPTH NUMJOBS NAME [WARMUP]: writes $work/job.fio, fio randread 4k with O_DIRECT on the guest's
# disk for $runtime seconds. With WARMUP seconds, a job named warm-up runs the same I/O first, and the measured
# job, in a group of its own, prints RG-MEASURE-BEGIN when it starts and RG-MEASURE-END when it ends (fio's
# exec_prerun and exec_postrun, once per job of numjobs; fio sends their output to a file, so they write to the
# console themselves): the window a benchmark samples the backend's CPU in.
randread_job() {
    local warm="" measured=""
    if [ "${4:-0}" -gt 0 ]; then
        warm="[warm-up]
runtime=$4"
        measured="stonewall
new_group
exec_prerun=sh -c \"echo RG-MEASURE-BEGIN >/dev/console\"
exec_postrun=sh -c \"echo RG-MEASURE-END >/dev/console\""
    fi
    cat >"$work/job.fio" <<FIO
[global]
filename=/dev/vda
direct=1
ioengine=libaio
bs=4k
rw=randread
iodepth=$1
numjobs=$2
group_reporting=1
time_based=1
runtime=$runtime
$warm
[$3]
$measured
FIO
}
