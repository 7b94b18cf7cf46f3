#!/usr/bin/env bash
# Every tool answers --version, exits 0, and names this Loom's version.
# Usage: version_test.sh VERSION TOOL...
set -euo pipefail
version=$1
shift
for tool in "$@"; do
  out=$("$tool" --version) || { echo "FAIL: $tool --version exited $?"; exit 1; }
  grep -q "$version" <<<"$out" || { echo "FAIL: $tool --version printed '$out', not version $version"; exit 1; }
  echo "ok: $(basename "$tool"): $out"
done
