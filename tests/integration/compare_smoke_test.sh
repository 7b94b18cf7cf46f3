#!/usr/bin/env bash
# Smoke test for perf/compare: a --quick AllReduce comparison on 2 ranks,
# printed only (--no-write leaves docs/ alone). Checks that the table has a
# Loom and an Open MPI busbw column with numbers in them, and that the
# comparison block of docs/PERF.md and docs/perf/ were not touched.
#
# Usage: compare_smoke_test.sh [SOURCE_DIR]   (default: this script's repository)
# Needs build/tools/loomrun and build/perf/all_reduce_perf under SOURCE_DIR,
# and Open MPI (mpicc, mpirun); exits 77 (ctest's SKIP_RETURN_CODE
# convention) when Open MPI is missing.
set -euo pipefail

ROOT=${1:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
cd "$ROOT"

fail() {
  echo "FAIL: $*" >&2
  [[ -f ${OUT:-} ]] && { echo "--- stdout:" >&2; cat "$OUT" >&2; }
  [[ -f ${ERR:-} ]] && { echo "--- stderr:" >&2; cat "$ERR" >&2; }
  exit 1
}

[[ -x perf/compare ]] || fail "perf/compare is missing or not executable"
[[ -x build/tools/loomrun && -x build/perf/all_reduce_perf ]] || fail "build Loom first (bash scripts/build.sh)"
if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null; then
  echo "SKIP: Open MPI (mpicc, mpirun) not installed"
  exit 77
fi

WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
OUT=$WORK/stdout
ERR=$WORK/stderr

# What perf/compare would write: its block in docs/PERF.md and docs/perf/.
# (Others may edit the rest of docs/PERF.md meanwhile; that is not checked.)
docs_state() {
  { sed -n '/<!-- compare:begin -->/,/<!-- compare:end -->/p' docs/PERF.md 2>/dev/null || true; } | cksum
  { find docs/perf -type f -printf '%p %s %T@\n' 2>/dev/null || true; } | sort
}
before=$(docs_state)

status=0
timeout 300 perf/compare --quick --ranks 2 --collectives allreduce --no-write >"$OUT" 2>"$ERR" || status=$?
[[ $status -eq 0 ]] || fail "perf/compare exited with status $status"

[[ "$(docs_state)" == "$before" ]] || fail "--no-write changed files under docs/"

# The AllReduce table: header with the Loom and Open MPI columns, then rows.
header=$(grep -m1 '^| size |' "$OUT") || fail "no table header"
IFS='|' read -r -a cols <<<"$header"
loom_col=-1 mpi_col=-1
for i in "${!cols[@]}"; do
  c=$(echo "${cols[$i]}" | xargs)
  [[ $c == "Loom busbw" ]] && loom_col=$i
  [[ $c == "Open MPI busbw" ]] && mpi_col=$i
done
[[ $loom_col -ge 0 ]] || fail "no 'Loom busbw' column in: $header"
[[ $mpi_col -ge 0 ]] || fail "no 'Open MPI busbw' column in: $header"

rows=0
while IFS='|' read -r -a cells; do
  loom=$(echo "${cells[$loom_col]}" | xargs)
  mpi=$(echo "${cells[$mpi_col]}" | xargs)
  [[ $loom =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "Loom cell is not a number: '$loom'"
  [[ $mpi =~ ^[0-9]+(\.[0-9]+)?$ ]] || fail "Open MPI cell is not a number: '$mpi'"
  rows=$((rows + 1))
done < <(sed -n '/^### AllReduce, 2 ranks/,/^###/p' "$OUT" | grep -E '^\| [0-9]+ (B|KiB|MiB|GiB) \|')
[[ $rows -ge 2 ]] || fail "expected at least 2 size rows in the AllReduce 2-rank table, got $rows"

grep -q '^- Command: `perf/compare --quick --ranks 2 --collectives allreduce --no-write`' "$OUT" \
  || fail "the command line is not recorded"
grep -q '^### 8 B AllReduce latency' "$OUT" || fail "no latency table"

echo "PASS: perf/compare --quick printed a Loom and an Open MPI column with numbers ($rows sizes)"
