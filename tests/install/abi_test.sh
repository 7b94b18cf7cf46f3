#!/usr/bin/env bash
# libloom.so's promise to linkers and packagers (README, "ABI"):
#  - it exports the C API of include/loom/loom.h and nothing else;
#  - every function that header declares is exported;
#  - the soname is libloom.so.MAJOR.MINOR before 1.0 (libloom.so.MAJOR after);
#  - loom/version.h carries CMake's project(VERSION), and loomGetVersion agrees.
# Usage: abi_test.sh LIBRARY SOURCE_DIR VERSION
set -euo pipefail
library=$1
source=$2
version=$3
fail() { echo "FAIL: $*"; exit 1; }

exported=$(nm -D --defined-only "$library" | awk '{print $3}' | sort)
[ -n "$exported" ] || fail "nm found no exported symbols in $library"
stray=$(grep -v '^loom' <<<"$exported" || true)
[ -z "$stray" ] || fail "$library exports symbols outside the C API:"$'\n'"$stray"

# Every loomXxx( declared in the public header must be there.
declared=$(grep -oE '\bloom[A-Z][A-Za-z]*\(' "$source/include/loom/loom.h" | tr -d '(' | sort -u)
[ -n "$declared" ] || fail "found no declarations in loom.h"
missing=$(comm -23 <(echo "$declared") <(echo "$exported"))
[ -z "$missing" ] || fail "declared in loom.h but not exported:"$'\n'"$missing"
extra=$(comm -13 <(echo "$declared") <(echo "$exported"))
[ -z "$extra" ] || fail "exported but not declared in loom.h:"$'\n'"$extra"

IFS=. read -r major minor patch <<<"$version"
if [ "$major" -eq 0 ]; then want="libloom.so.$major.$minor"; else want="libloom.so.$major"; fi
soname=$(objdump -p "$library" | awk '$1 == "SONAME" {print $2}')
[ "$soname" = "$want" ] || fail "soname is '$soname', the ABI promise says '$want'"

header=$(dirname "$library")/include/loom/version.h
grep -q "#define LOOM_VERSION_STRING \"$version\"" "$header" || fail "$header does not say $version"
grep -q "#define LOOM_MAJOR $major\$" "$header" || fail "$header: LOOM_MAJOR is not $major"
grep -q "#define LOOM_MINOR $minor\$" "$header" || fail "$header: LOOM_MINOR is not $minor"
grep -q "#define LOOM_PATCH $patch\$" "$header" || fail "$header: LOOM_PATCH is not $patch"
echo "PASS: $(wc -l <<<"$exported") symbols, all loom*, matching loom.h; soname $soname; version $version"
