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

# serve_gosh SOCKET: writes $work/serve.gosh, Kickplug's export of one null disk of $size bytes with $queues
# queues over vhost-user at SOCKET.
serve_gosh() {
    cat >"$work/serve.gosh" <<GOSH
kp:attach --queues $queues --iothreads 1 --backend null d0 $size
kp:vhost d0 --socket $1 --queues $queues
GOSH
}

# start_qsd SOCKET LOG: starts qemu-storage-daemon in the background (its pid in $!) with the same export.
start_qsd() {
    qemu-storage-daemon --blockdev driver=null-co,node-name=n0,size=$size,read-zeroes=off \
        --export type=vhost-user-blk,id=e0,node-name=n0,addr.type=unix,addr.path="$1",writable=on,num-queues=$queues \
        >"$2" 2>&1 &
}

# randread_job IODEPTH NUMJOBS NAME: writes $work/job.fio, fio randread 4k with O_DIRECT on the guest's disk
# for $runtime seconds.
randread_job() {
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
[$3]
FIO
}
