#!/bin/sh
# Regenerates the documentation's figures (docs/figures/*.svg) from the committed result files
# (docs/results/*.json) with the project's own report code (io.kickplug.benchmarks.report.Figures, plain JDK):
# compiles that one package with javac into a temporary folder and runs it from the repository's root, so it needs
# no Maven build. The same JSON gives the same bytes; `mvn -B verify` fails when a committed figure differs.
#
#   scripts/figures.sh            write docs/figures/*.svg
#   scripts/figures.sh --check    write nothing; exit 1 naming each figure that is missing or differs
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
classes=$(mktemp -d "${TMPDIR:-/tmp}/kp-figures.XXXXXX")
trap 'rm -rf "$classes"' EXIT
javac --release 17 -d "$classes" "$root"/benchmarks/src/main/java/io/kickplug/benchmarks/report/*.java
cd "$root"
java -cp "$classes" io.kickplug.benchmarks.report.Figures "$@" docs/results docs/figures
