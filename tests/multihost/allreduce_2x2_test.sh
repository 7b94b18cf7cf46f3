#!/usr/bin/env bash
# AllReduce across fake hosts: 2 hosts of 2 ranks each (scripts/loom-hosts.sh),
# so every ring crosses the bridge, with all_reduce_perf checking every
# result (-c 1). Ranks of different hosts can meet only over the network:
# their own hostnames, /dev/shm and PID namespaces keep shared memory out.
#
# Usage: allreduce_2x2_test.sh /path/to/loom-hosts.sh /path/to/loomrun /path/to/all_reduce_perf
set -euo pipefail

# shellcheck source=one_job.sh
source "$(dirname "${BASH_SOURCE[0]}")/one_job.sh" "$@"
# A rank that cannot reach another fails within seconds, not 10 minutes.
export LOOM_TIMEOUT_MS=20000

status=0
bash "$1" --loomrun "$2" --hosts 2 -n 2 --timeout 90 -- "$3" -b 8 -e 1M -f 4 -c 1 >"$WORK/out" 2>&1 || status=$?
cat "$WORK/out"
[[ $status -eq 0 ]] || { echo "FAIL: loom-hosts.sh exited $status" >&2; exit 1; }
grep -q '^# Out of bounds values : 0 OK' "$WORK/out" || { echo "FAIL: no correct AllReduce across the hosts" >&2; exit 1; }
for rank in 0 1 2 3; do
  grep -Eq "^#  Rank  $rank Group  0 .* on +host$((rank / 2)) " "$WORK/out" ||
    { echo "FAIL: rank $rank is not on host$((rank / 2))" >&2; exit 1; }
done
echo "PASS: AllReduce over 2 fake hosts of 2 ranks each"
