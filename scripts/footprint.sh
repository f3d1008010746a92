#!/bin/bash
# Footprint and start-up of the storage daemon side by side with qemu-storage-daemon (a measurement, not a
# test): one exported null disk; per server and start the time to ready and the CPU time then, the resident
# memory and threads when idle, the highest resident memory and thread count under the front-end's QD64 run and
# the memory after it (io.kickplug.benchmarks.vhost.VhostFootprint; docs/service.md, "Footprint").
#
#   scripts/footprint.sh [--launcher kickplugd[,jar]] [--starts 3] [--idle 5] [--load 10] [--kickplugd-opts "..."]
#
# Needs a built tree (mvn -B -q -DskipTests package). Wall times depend on the machine's load, which is printed.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
for f in benchmarks/target/benchmarks.jar distribution/target/kickplugd; do
    [ -f "$f" ] || { echo "build first (mvn -B -q -DskipTests package): $f is missing" >&2; exit 2; }
done
exec java -XX:+UseSerialGC -cp benchmarks/target/benchmarks.jar io.kickplug.benchmarks.vhost.VhostFootprint "$@"
