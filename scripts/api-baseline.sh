#!/usr/bin/env bash
# Records the api bundle as released: builds api/ and stores its jar as io.kickplug:kickplug-api:VERSION in the
# file repository api/baseline/ (laid out as a Maven repository), the baseline that bnd's baselining in
# `mvn verify` compares every later api build with (docs/plugin-guide.md, "Versioning and the compatibility
# promise"). Run it when a release is cut, with the released version, then set kickplug.api.baseline in
# api/pom.xml to it and commit both:
#
#   scripts/api-baseline.sh 0.1.0 [MAVEN ARGS...]
#
# The stored jar's Bundle-Version is VERSION (the build's own is the project's SNAPSHOT version): the bundle
# version the next builds must exceed by the largest change bnd finds (micro, minor or major).
set -eu
cd "$(dirname "$0")/.."
version=${1:?usage: scripts/api-baseline.sh VERSION [MAVEN ARGS...]}
shift
[[ $version =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]] || { echo "VERSION must be MAJOR.MINOR.MICRO, not $version" >&2; exit 2; }
mvn -B -q -pl api -DskipTests -Dkickplug.prerequisites.skip=true package "$@"
built=$(ls api/target/kickplug-api-*.jar | grep -v -e sources -e javadoc | head -1)
dir=api/baseline/io/kickplug/kickplug-api/$version
mkdir -p "$dir"
python3 - "$built" "$dir/kickplug-api-$version.jar" "$version" <<'EOF'
import re, sys, zipfile
src, dst, version = sys.argv[1:4]
with zipfile.ZipFile(src) as zin, zipfile.ZipFile(dst, "w", zipfile.ZIP_DEFLATED) as zout:
    for item in zin.infolist():
        data = zin.read(item.filename)
        if item.filename == "META-INF/MANIFEST.MF":
            text = data.decode("utf-8")
            text, n = re.subn(r"(?m)^Bundle-Version: .*$", "Bundle-Version: " + version, text)
            assert n == 1, "no Bundle-Version in the manifest"
            data = text.encode("utf-8")
        zout.writestr(item, data)
EOF
cat > "$dir/kickplug-api-$version.pom" <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>io.kickplug</groupId>
  <artifactId>kickplug-api</artifactId>
  <version>$version</version>
  <description>The Kickplug api bundle as released: the baseline of bnd's baselining (scripts/api-baseline.sh).</description>
</project>
EOF
versions=$(ls api/baseline/io/kickplug/kickplug-api | grep -E '^[0-9]+\.[0-9]+\.[0-9]+$' | sort -V)
latest=$(echo "$versions" | tail -1)
{
    echo '<?xml version="1.0" encoding="UTF-8"?>'
    echo '<metadata>'
    echo '  <groupId>io.kickplug</groupId>'
    echo '  <artifactId>kickplug-api</artifactId>'
    echo '  <versioning>'
    echo "    <latest>$latest</latest>"
    echo "    <release>$latest</release>"
    echo '    <versions>'
    for v in $versions; do echo "      <version>$v</version>"; done
    echo '    </versions>'
    echo '  </versioning>'
    echo '</metadata>'
} > api/baseline/io/kickplug/kickplug-api/maven-metadata.xml
echo "stored $dir/kickplug-api-$version.jar; now set <kickplug.api.baseline>$version</kickplug.api.baseline> in api/pom.xml"
