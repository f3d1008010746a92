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
