#!/usr/bin/env bash
# Regenerates docs/reference/commands.md and docs/reference/configuration.md from the code: builds the bundles
# and the distribution, then runs ReferenceDocsIT in write mode, which generates both pages from the bundle jars
# (the commands' Gogo @Descriptor/@Parameter and option tables, the metatype XML) and writes them. Without write
# mode the same test, part of `mvn -B verify`, fails when a committed page is out of date.
#
#   scripts/reference-docs.sh [MAVEN ARGS...]     (e.g. -o to stay offline)
#
# Unit tests are skipped here (they run in mvn verify). Review the change with git diff, then commit it.
set -eu
cd "$(dirname "$0")/.."
mvn -B -q -pl distribution -am verify \
    -Dtest=NONE -Dsurefire.failIfNoSpecifiedTests=false \
    -Dit.test=ReferenceDocsIT -Dfailsafe.failIfNoSpecifiedTests=false \
    -Dkickplug.docs.write=true "$@"
git --no-pager diff --stat -- docs/reference/commands.md docs/reference/configuration.md || true
