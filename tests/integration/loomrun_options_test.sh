#!/usr/bin/env bash
# loomrun's command line, word by word: every spelling it accepts, and the
# ones getopt_long_only would accept but loomrun has always refused with
# status 2 (abbreviations, bundles, attached values, one-dash long names).
# loomrun_test.sh covers what the options do; this pins how they are spelled.
#
# Usage: loomrun_options_test.sh /path/to/loomrun
set -euo pipefail

if [[ $# -ne 1 || ! -x $1 ]]; then
  echo "usage: $0 /path/to/loomrun" >&2
  exit 2
fi
LOOMRUN=$1
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
failures=0

# expect STATUS STDERR ARGS...: one run; its status, and all of its stderr.
expect() {
  local want=$1 want_stderr=$2
  shift 2
  local status=0
  timeout -s KILL 20 "$LOOMRUN" "$@" >"$WORK/stdout" 2>"$WORK/stderr" </dev/null || status=$?
  if [[ $status -ne $want || $(cat "$WORK/stderr") != "$want_stderr" ]]; then
    printf 'FAIL: loomrun'
    printf ' %q' "$@"
    echo ": expected status $want and stderr '$want_stderr', got $status and '$(cat "$WORK/stderr")'"
    failures=$((failures + 1))
  fi
}
unknown() {  # the word loomrun must refuse, then the command line
  local word=$1
  shift
  expect 2 "loomrun: unknown option '$word' (options go before the command; see loomrun --help)." "$@"
}

# Accepted spellings.
for n in "-n 2" "-np 2" "--np 2" "--np=2"; do
  # shellcheck disable=SC2086
  expect 0 '' $n -- sh -c '[ "$WORLD_SIZE" = 2 ]'
done
expect 0 '' -n 1 --tag-output --timeout 30 --bind-to none -- true
expect 0 '' -n 1 --timeout=30 --bind-to=core true
for n in "--nproc-per-node 2" "--nproc_per_node=2"; do
  # shellcheck disable=SC2086
  expect 0 '' $n -- sh -c '[ "$LOCAL_WORLD_SIZE" = 2 ]'
done
# torchrun's node options, with dashes or underscores, value apart or after "=".
node_check='[ "$GROUP_RANK/$GROUP_WORLD_SIZE $MASTER_ADDR:$MASTER_PORT" = "1/2 198.18.0.1:1234" ]'
expect 0 '' -n 1 --nnodes 2 --node-rank 1 --master-addr 198.18.0.1 --master-port 1234 -- sh -c "$node_check"
expect 0 '' -n 1 --nnodes=2 --node_rank=1 --master_addr=198.18.0.1 --master_port=1234 -- sh -c "$node_check"
expect 0 '' -n 1 --nnodes=2:2 --node-rank=1 --master-addr=198.18.0.1 --master-port=1234 -- sh -c "$node_check"
for help in -h --help --help=x; do expect 0 '' "$help"; done
for version in -V --version --version=x; do expect 0 '' "$version"; done
grep -q '^loomrun (Loom) ' "$WORK/stdout" || { echo "FAIL: --version=x printed no version"; failures=$((failures + 1)); }
# Parsing stops at CMD; CMD's own options are its own.
expect 0 '' -n 1 sh -c '[ "$1" = --tag-output ]' x --tag-output
expect 0 '' -n 1 -- sh -c '[ "$1" = -n ]' x -n

# Refused: abbreviations, bundles, attached values, one-dash long names, "-".
unknown --tag -n 1 --tag true
unknown --time -n 1 --time 5 true
unknown --he --he
unknown -hV -hV
unknown -n2 -n2 true
unknown -n=2 -n=2 true
unknown -np=2 -np=2 true
unknown -timeout -n 1 -timeout 5 true
unknown -help -help
unknown --tag-output=1 -n 1 --tag-output=1 true
unknown - -n 1 - true
unknown --frobnicate -n 1 --frobnicate true
unknown --node -n 1 --node 0 true
unknown --master -n 1 --master x true
unknown -nnodes -n 1 -nnodes 2 true
unknown --node-rank_ -n 1 --node-rank_ 0 true

# A missing value names the option as it was written.
expect 2 'loomrun: option -n needs the number of ranks.' -n
expect 2 'loomrun: option -np needs the number of ranks.' -np
expect 2 'loomrun: option --np needs the number of ranks.' --np
expect 2 'loomrun: option --timeout needs a number of seconds.' -n 1 --timeout
expect 2 'loomrun: option --bind-to needs core or none.' -n 1 --bind-to
expect 2 'loomrun: option --nproc-per-node needs the number of ranks.' --nproc-per-node
expect 2 'loomrun: option --nnodes needs the number of nodes.' -n 1 --nnodes
expect 2 "loomrun: option --node_rank needs this node's rank." -n 1 --node_rank
expect 2 'loomrun: option --master-addr needs the address of node 0.' -n 1 --master-addr
expect 2 'loomrun: option --master_port needs a port number.' -n 1 --master_port
# A value is the next word, whatever it looks like.
expect 2 "loomrun: the number of ranks must be a whole number from 1 to 1024, not '--'." -n -- true
expect 2 "loomrun: --bind-to takes core or none, not '--help'." -n 1 --bind-to --help true

if [[ $failures -ne 0 ]]; then
  echo "$failures loomrun option checks failed."
  exit 1
fi
echo "All loomrun option spellings behave as before."
