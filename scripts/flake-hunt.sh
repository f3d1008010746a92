#!/usr/bin/env bash
# Flake hunt: runs the whole suite (mvn -B verify) N times, every second run with all CPUs saturated by a
# background load, keeps each run's surefire/failsafe reports (and hs_err files) and lists every test that failed
# at least once, or whose test JVM died (surefire's "Crashed tests").
# Not part of the normal test command. See docs/testing.md, "Flake hunt".
#
#   scripts/flake-hunt.sh [-n RUNS] [-o DIR] [-l LOADERS] [-- MAVEN ARGS...]
#
#   -n RUNS     number of runs (default 10); odd runs idle, even runs loaded
#   -o DIR      where run logs, reports and summary.txt go (default target/flake-hunt-<date>)
#   -l LOADERS  busy loops in a loaded run (default: the number of CPUs)
#   MAVEN ARGS  replace the default "-B verify" arguments (e.g. -- -B verify -pl blk-device -am)
#
# Exit status: 0 when no test failed in any run, 1 otherwise (and 2 for a usage error).
set -u

runs=10
out=""
loaders=$(nproc 2>/dev/null || echo 2)
while getopts "n:o:l:h" opt; do
    case $opt in
        n) runs=$OPTARG ;;
        o) out=$OPTARG ;;
        l) loaders=$OPTARG ;;
        h) sed -n '2,14p' "$0"; exit 0 ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ "${1:-}" = "--" ] && shift
if [ $# -gt 0 ]; then mvn_args=("$@"); else mvn_args=(-B verify); fi
case $runs in ''|*[!0-9]*) echo "runs must be a number" >&2; exit 2 ;; esac

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root" || exit 2
[ -n "$out" ] || out="target/flake-hunt-$(date -u +%Y%m%dT%H%M%SZ)"
mkdir -p "$out"
out=$(cd "$out" && pwd)
failures="$out/failures.tsv"   # run, load, class, test, kind
: > "$failures"

load_pids=()
stop_load() {
    for pid in "${load_pids[@]}"; do
        kill "$pid" 2>/dev/null
        wait "$pid" 2>/dev/null
    done
    load_pids=()
}
trap 'stop_load' EXIT
trap 'stop_load; exit 130' INT TERM

start_load() {
    for _ in $(seq "$loaders"); do
        ( while :; do :; done ) &
        load_pids+=("$!")
    done
}

# Prints "class<TAB>test<TAB>kind" for each failed or errored test case of the report files given.
failed_cases() {
    awk '
        /<testcase / {
            name = ""; cls = ""
            if (match($0, / name="[^"]*"/)) name = substr($0, RSTART + 7, RLENGTH - 8)
            if (match($0, / classname="[^"]*"/)) cls = substr($0, RSTART + 12, RLENGTH - 13)
        }
        /<failure[ >\/]/ { print cls "\t" name "\tfailure" }
        /<error[ >\/]/   { print cls "\t" name "\terror" }
    ' "$@"
}

# Prints each test class that surefire or failsafe lists under "Crashed tests:" in the Maven log given.
crashed_classes() {
    awk '/Crashed tests:/ { c = 1; next }
         c && /^\[ERROR\] +[A-Za-z_][A-Za-z0-9_.$]* *$/ { print $2; next }
         { c = 0 }' "$1" | sort -u
}

echo "flake hunt: $runs runs of mvn ${mvn_args[*]} in $root; output $out"
for i in $(seq "$runs"); do
    load=idle
    if [ $((i % 2)) -eq 0 ]; then load=loaded; fi
    find . -path ./target -prune -o -type d \( -name surefire-reports -o -name failsafe-reports \) -print \
        | xargs -r rm -rf
    [ "$load" = loaded ] && start_load
    start=$(date +%s)
    mvn "${mvn_args[@]}" -Dmaven.test.failure.ignore=true -fae > "$out/run-$i.log" 2>&1
    status=$?
    stop_load
    secs=$(( $(date +%s) - start ))
    mkdir -p "$out/run-$i"
    reports=$(find . -path ./target -prune -o -type f -path '*-reports/TEST-*.xml' -print)
    n_reports=0
    for f in $reports; do
        dest="$out/run-$i/$(echo "${f#./}" | tr '/' '_')"
        cp "$f" "$dest"
        n_reports=$((n_reports + 1))
    done
    run_failed=0
    if [ "$n_reports" -gt 0 ]; then
        while IFS=$'\t' read -r cls name kind; do
            printf '%s\t%s\t%s\t%s\t%s\n' "$i" "$load" "$cls" "$name" "$kind" >> "$failures"
            run_failed=$((run_failed + 1))
        done < <(failed_cases "$out/run-$i"/*.xml)
    fi
    # A test JVM that died (a crash, System.exit) leaves no report for its class; surefire names it in the log,
    # and the JVM may have left an hs_err file, which goes with the run's reports.
    while read -r cls; do
        printf '%s\t%s\t%s\t%s\t%s\n' "$i" "$load" "$cls" "(test JVM died)" "crash" >> "$failures"
        run_failed=$((run_failed + 1))
    done < <(crashed_classes "$out/run-$i.log")
    find . -path ./target -prune -o -type f -name 'hs_err_pid*.log' -print | while read -r f; do
        mv "$f" "$out/run-$i/$(echo "${f#./}" | tr '/' '_')"
    done
    tests=$(cat "$out/run-$i"/*.xml 2>/dev/null | grep -c '<testcase ' || true)
    printf 'run %d (%s): mvn exit %d, %d s, %d report files, %d test cases, %d failed\n' \
        "$i" "$load" "$status" "$secs" "$n_reports" "$tests" "$run_failed" | tee -a "$out/runs.txt"
    if [ "$status" -ne 0 ] && [ "$run_failed" -eq 0 ]; then
        echo "  run $i: maven failed without a failed test (build error?): see $out/run-$i.log" \
            | tee -a "$out/runs.txt"
        echo -e "$i\t$load\t(build)\tmvn exit $status\tbuild" >> "$failures"
    fi
done

{
    echo "flake hunt $(date -u +%FT%TZ): $runs runs of: mvn ${mvn_args[*]} (even runs with $loaders busy loops)"
    cat "$out/runs.txt"
    if [ -s "$failures" ]; then
        echo
        echo "tests that failed at least once (failed runs / $runs; which runs):"
        awk -F'\t' '{ key = $3 "." $4; n[key]++; runs[key] = runs[key] " " $1 "(" $2 ")" }
            END { for (k in n) printf "  %s: %d;%s\n", k, n[k], runs[k] }' "$failures" | sort
    else
        echo
        echo "no test failed in any run"
    fi
} > "$out/summary.txt"
cat "$out/summary.txt"
[ ! -s "$failures" ]
