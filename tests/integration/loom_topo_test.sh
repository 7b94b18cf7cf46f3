#!/usr/bin/env bash
# loom-topo on real fixtures and on this machine: the key lines a person reads.
#
# Usage: loom_topo_test.sh /path/to/loom-topo /path/to/tests/data/topologies
set -euo pipefail

if [[ $# -ne 2 || ! -x $1 || ! -d $2 ]]; then
  echo "usage: $0 /path/to/loom-topo /path/to/topologies" >&2
  exit 2
fi
TOPO=$1
DATA=$2
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT

fail() {
  echo "FAIL: $*" >&2
  [[ -f $WORK/out ]] && sed 's/^/  | /' "$WORK/out" | cut -c1-300 | head -60 >&2  # 1000-GPU reports are long
  exit 1
}
pass() { echo "PASS: $*"; }
expect_line() {  # regex that some line of $WORK/out must match
  grep -Eq -- "$1" "$WORK/out" || fail "no line matches /$1/"
}

# Pascal: two P100 and the ConnectX-5 behind one PCIe switch.
timeout 20 "$TOPO" --no-versions --topo-file "$DATA/llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml" \
  --ranks 4 --map-by socket >"$WORK/out" 2>&1 || fail "pascal exited $?"
expect_line '^Machine pascal4 .*: 2 sockets, 2 NUMA nodes, 36 cores, 72 PUs, .*2 GPUs, 3 NICs'
expect_line '^    NUMA 0: CPUs 0-17,36-53'
expect_line '^      PCI switch 0000:02:00.0'
expect_line '^        GPU GPU0 \[0000:04:00.0\] Tesla P100-PCIE-16GB, PCIe 8 GT/s x16 \(12 GB/s\)'
expect_line '^        NIC mlx5_0 \[0000:08:00.0\] \(hsi0\) RDMA'
expect_line '^GPU0 +X +PIX +PIX +PHB +PHB +PHB +SYS'
expect_line '^GPU0 +0-17,36-53 +0 +mlx5_0 \(PIX, 12 GB/s\)'
expect_line '^  rank order: 0 1 2 3 .*sockets 4x'
expect_line '^  Loom ring:  0 2 1 3 .*sockets 2x'
expect_line '^  Loom tree:  0 -> 1 2; 1 -> 3  \(root 0'
pass "tree, matrix, rings and the Broadcast/Reduce tree of the Pascal node"
expect_line '^4 ranks on 1 host, LOOM_TRANSPORTS=\(unset: every transport\):'
expect_line '^  within host0 \(ranks 0-3\): SHM$'
pass "one host: every pair over shared memory"

# A launch across hosts: 1 + 2 + 3 ranks on three hosts like Pascal.
timeout 20 "$TOPO" --no-versions --topo-file "$DATA/llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml" \
  --hosts 1,2,3 --map-by socket >"$WORK/out" 2>&1 || fail "--hosts 1,2,3 exited $?"
expect_line '^6 ranks on 3 hosts like this one, --map-by socket:'
expect_line '^  rank 0: host0, CPU '
expect_line '^  rank 5: host2, CPU '
expect_line '^  Loom ring:  0 1 2 3 5 4  \(crosses hosts 3x'
expect_line '^6 ranks on 3 hosts, LOOM_TRANSPORTS=\(unset: every transport\):'
expect_line '^  within host0 \(rank 0\): no pairs$'
expect_line '^  within host1 \(ranks 1 and 2\): SHM$'
expect_line '^  within host2 \(ranks 3-5\): SHM$'
expect_line '^  host0 <-> host2: TCP$'
expect_line '^  1 +TCP +- +SHM +TCP +TCP +TCP$'
expect_line '^  AllReduce: within and across hosts in steps where the cost model finds it cheaper \(3 hosts with 1, 2 and 3 ranks; --plan shows where\)$'
expect_line '^  AllGather, ReduceScatter: flat schedules \(3 hosts with 1, 2 and 3 ranks; in steps a larger host.s further blocks would take more than two rounds'
pass "--hosts 1,2,3: ring enters each host once; SHM inside hosts, TCP across"

LOOM_TRANSPORTS=tcp timeout 20 "$TOPO" --no-versions --topo-file "$DATA/llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml" \
  --hosts 2,2 >"$WORK/out" 2>&1 || fail "LOOM_TRANSPORTS=tcp --hosts 2,2 exited $?"
expect_line '^  within host0 \(ranks 0 and 1\): TCP$'
expect_line '^  AllReduce, AllGather, ReduceScatter: within and across hosts in steps where the cost model finds it cheaper \(2 hosts with 2 and 2 ranks; --plan shows where\)$'
LOOM_TRANSPORTS=shm timeout 20 "$TOPO" --no-versions --topo-file "$DATA/llnl-pascal-2xP100-pcie-switch-mlx5.hwloc.xml" \
  --hosts 2,2 >"$WORK/out" 2>&1 || fail "LOOM_TRANSPORTS=shm --hosts 2,2 exited $?"
expect_line '^  none: .*no transport can connect rank 0 and rank 2 \(rank 2 runs on host host1 and rank 0 on host0\)'
pass "LOOM_TRANSPORTS forces TCP inside hosts; shm alone cannot connect two hosts, and says so"

for bad in "2,,2" "0" "2,x" "" "70000"; do
  if timeout 20 "$TOPO" --no-versions --hosts "$bad" >"$WORK/out" 2>&1; then fail "--hosts '$bad' was accepted"; fi
  expect_line "^loom-topo: --hosts $bad: each host's number of ranks must be a whole number from 1 to 65536"
done
pass "a malformed --hosts is refused, naming the item"

# DGX-2: every GPU pair NVL through the NVSwitch fabric.
timeout 20 "$TOPO" --no-versions --topo-file "$DATA/nvidia-dgx2-16xV100-nvswitch.hwloc.xml" >"$WORK/out" 2>&1 ||
  fail "dgx2 exited $?"
expect_line '16 GPUs, 0 NICs, 12 NVSwitches'
expect_line '^GPU0 +X( +NVL){15} +PHB +SYS'
pass "DGX-2 NVSwitch fabric"

# HGX H100 as NCCL dumps it where the NVSwitches are hidden: one placeholder
# target per GPU; the switch is shown, and every GPU pair is NVL.
H100=$DATA/hgx-h100-8gpu-nvswitch-vm.nccl-topo.xml
timeout 20 "$TOPO" --no-versions --topo-file "$H100" >"$WORK/out" 2>&1 || fail "h100 exited $?"
expect_line '8 GPUs, 8 NICs, 1 NVSwitches$'
expect_line '^  NVSwitch fabric \(NVLink only, not in the PCI tree\):$'
expect_line '^    NVSwitch NVS0 \[fffffff:ff:ff\.0\], NVLink 144 lanes to 8 peers \(2966\.4 GB/s\), address hidden'
expect_line '^        GPU GPU0 \[0000:1b:00\.0\], PCIe 32\.0 GT/s PCIe x16 \(48 GB/s\), NVLink 18 lanes to 1 peers'
expect_line '^GPU0 +X( +NVL){7} +PIX( +PHB){3}( +SYS){4} +PHB +SYS *$'
expect_line '^GPU7( +NVL){7} +X( +SYS){4}( +PHB){3} +PIX +SYS +PHB *$'
expect_line '^GPU7 +56-111,168-223 +1 +mlx5_7 \(PIX, 48 GB/s\)'
if grep -q WARN "$WORK/out"; then fail "h100 file gave a warning"; fi
timeout 20 "$TOPO" --json --topo-file "$H100" >"$WORK/out"
expect_line '"nvswitches": 1,'
expect_line '"kind": "NVSwitch", "name": "NVS0", "parent": -1, "busid": "fffffff:ff:ff.0", "class": "0x068000"'
timeout 20 "$TOPO" --dot --topo-file "$H100" >"$WORK/out"
expect_line 'shape=hexagon, color=darkgreen, label="NVSwitch\\nfffffff:ff:ff.0"'
[[ $(grep -c 'label="NV18"' "$WORK/out") -eq 8 ]] || fail "--dot does not draw 8 NV18 links"
timeout 20 "$TOPO" --xml --topo-file "$H100" >"$WORK/a.xml"
[[ $(grep -c '<nvlink target="fffffff:ff:ff.0" count="18" tclass="0x068000"/>' "$WORK/a.xml") -eq 8 ]] ||
  fail "placeholder nvlinks lost in --xml"
pass "HGX H100 NVSwitch placeholder: tree, matrix, --json, --dot, --xml"

# A VM that names the GPU itself as its NVLink peer: loads, warns once with file:line.
printf '<system version="1">\n  <cpu numaid="0">\n    <pci busid="0000:01:00.0" class="0x030200">\n      <gpu dev="0" sm="90">\n        <nvlink target="0000:01:00.0" count="18" tclass="0x030200"/>\n      </gpu>\n    </pci>\n  </cpu>\n</system>\n' >"$WORK/self.xml"
timeout 20 "$TOPO" --no-versions --topo-file "$WORK/self.xml" >"$WORK/out" 2>&1 || fail "self-nvlink file exited $?"
expect_line 'self.xml:5: <nvlink> of GPU 0000:01:00.0 names the GPU itself as its peer'
expect_line '^      GPU GPU0 \[0000:01:00\.0\], link unknown, NVLink 18 lanes to peers the file does not name$'
[[ $(grep -c 'names the GPU itself' "$WORK/out") -eq 1 ]] || fail "self-nvlink warned more than once"
pass "NVLink to the GPU itself: loaded, warned once"

# --xml, reloaded, prints the same; --json and --dot are well-formed enough.
timeout 20 "$TOPO" --xml --topo-file "$DATA/hgx-a100-8gpu-nvswitch-cx6.nccl-topo.xml" >"$WORK/a.xml"
timeout 20 "$TOPO" --xml --topo-file "$WORK/a.xml" >"$WORK/b.xml"
cmp -s "$WORK/a.xml" "$WORK/b.xml" || fail "--xml round trip differs"
grep -q '<nvlink target="0000:c0:00.0" count="2" tclass="0x068000"/>' "$WORK/a.xml" || fail "nvlink lost in --xml"
timeout 20 "$TOPO" --json --topo-file "$DATA/hgx-a100-8gpu-nvswitch-cx6.nccl-topo.xml" >"$WORK/out"
expect_line '"gpus": 8,'
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$WORK/out" || fail "--json is not JSON"
fi
timeout 20 "$TOPO" --dot --topo-file "$DATA/hgx-a100-8gpu-nvswitch-cx6.nccl-topo.xml" >"$WORK/out"
expect_line '^graph loom_topology \{'
expect_line 'color=green, penwidth=2, label="NV2"'
pass "--xml round trip, --json, --dot"

# A bad file: exit 1 and file:line on stderr.
printf '<system version="1">\n  <cpu numaid="0">\n    <pci busid="zz"/>\n  </cpu>\n</system>\n' >"$WORK/bad.xml"
if timeout 20 "$TOPO" --topo-file "$WORK/bad.xml" >"$WORK/out" 2>&1; then fail "bad file accepted"; fi
expect_line "bad.xml:3: <pci> has bus id 'zz' which is not a PCI address"
pass "bad file rejected with file and line"

# A number no int holds, in an hwloc file (std::stoi once threw out of the
# reader and loom-topo ended in std::terminate): exit 1, file:line, the value.
sed 's/name="CPUFamilyNumber" value="6"/name="CPUFamilyNumber" value="4294967296"/' \
  "$DATA/aws-g4dn-metal-8xT4-pcie.hwloc.xml" >"$WORK/family.xml"
set +e
timeout 20 "$TOPO" --no-versions --topo-file "$WORK/family.xml" >"$WORK/out" 2>&1
status=$?
set -e
[[ $status -eq 1 ]] || fail "CPUFamilyNumber beyond int: exit status $status, expected 1"
expect_line '^loom-topo: .*family\.xml:30: <info name="CPUFamilyNumber"> of <object type="Package"> has value="4294967296"'
if grep -q terminate "$WORK/out"; then fail "std::terminate"; fi
pass "hwloc number beyond int: a sentence with file and line, exit 1"

# 1000 GPUs and 250 NICs (tests/integration/make_large_topology.sh): every
# report is complete and right. How long they take is in docs/RELIABILITY.md
# ("Topology input"), not asserted here; the timeouts only catch a hang.
bash "$(dirname "$0")/make_large_topology.sh" 1000 >"$WORK/big.xml"
timeout 60 "$TOPO" --no-versions --topo-file "$WORK/big.xml" --ranks 1000 >"$WORK/out" 2>&1 || fail "1000 GPUs exited $?"
expect_line '^Machine .*: 2 sockets, 8 NUMA nodes, 256 cores, 256 PUs, 1000 GPUs, 250 NICs, 0 NVSwitches$'
expect_line '^GPU0 +X +NVL +NVB +PXB( +SYS){28} +PHB '
expect_line '^GPU2 +NVB +NVL +X +PIX( +SYS){28} +PHB '
expect_line '^GPU999( +SYS){4}( +PHB){4}( +SYS){24} '
expect_line '^mlx5_249( +SYS){4}( +PHB){4}( +SYS){24} '
[[ $(awk '$1 == "mlx5_249" { print $998, $999, $1000, $1001 }' "$WORK/out") == "PXB PXB PXB PXB" ]] ||
  fail "mlx5_249 is not PXB to GPUs 996-999 of its switch"
expect_line '^GPU999 +32-63 +1 +mlx5_249 \(PXB, 24 GB/s\)$'
[[ $(grep -Ec '^(GPU[0-9]+|mlx5_[0-9]+|NUMA[0-7]) ' "$WORK/out") -eq $((2 * 1000 + 250 + 8)) ]] ||
  fail "1000 GPUs: not one matrix row and one affinity row per GPU, one matrix row per NIC and NUMA node"
expect_line '^  rank 999: CPU 243, socket 1, NUMA 7, nearest NIC mlx5_7$'
expect_line '^  Loom ring:  0 2 4 .* 997 999  \(crosses hosts 0x, sockets 2x, NUMA nodes 6x\)$'
timeout 60 "$TOPO" --json --topo-file "$WORK/big.xml" >"$WORK/out" || fail "1000 GPUs --json exited $?"
expect_line '"gpus": 1000,'
if command -v python3 >/dev/null; then
  python3 -c 'import json,sys; m=json.load(open(sys.argv[1]))["paths"]; n=len(m["names"]); assert n == 1258 and all(len(r) == n for r in m["classes"]); assert m["classes"][0][1:4] == ["NVL", "NVB", "PXB"]' \
    "$WORK/out" || fail "1000 GPUs --json: not a 1258 x 1258 path matrix"
fi
timeout 60 "$TOPO" --dot --topo-file "$WORK/big.xml" >"$WORK/out" || fail "1000 GPUs --dot exited $?"
[[ $(grep -c 'label="NV4"' "$WORK/out") -eq 500 ]] || fail "1000 GPUs --dot does not draw 500 NVLinks"
timeout 60 "$TOPO" --xml --topo-file "$WORK/big.xml" >"$WORK/a.xml" || fail "1000 GPUs --xml exited $?"
timeout 60 "$TOPO" --xml --topo-file "$WORK/a.xml" >"$WORK/b.xml" || fail "1000 GPUs --xml reload exited $?"
cmp -s "$WORK/a.xml" "$WORK/b.xml" || fail "1000 GPUs --xml round trip differs"
[[ $(grep -c '<gpu ' "$WORK/a.xml") -eq 1000 ]] || fail "1000 GPUs --xml does not hold 1000 <gpu>"
pass "1000 GPUs: tree, matrix, nearest NICs, 1000-rank ring, --json, --dot, --xml"

# This machine (CPU-only, maybe a container): versions, tree, and a short --check.
timeout 60 "$TOPO" --ranks 4 --map-by core >"$WORK/out" 2>&1 || fail "this machine exited $?"
expect_line '^  Loom: +[0-9]+\.[0-9]+\.[0-9]+'
expect_line '^  hwloc: +[0-9]+\.[0-9]+'
expect_line '^  glibc: +[0-9]'
expect_line '^Machine .*\(hwloc detection\)'
expect_line '^  Loom ring: '
pass "this machine"

# --plan: the choice select.cc makes on a layout, with the model's estimates
# (tests/unit/plan_test.cc checks the rules; this checks what prints). Hosts
# like a machine of 48 cores, whatever runs the test: where ranks outnumber
# a host's CPUs they take turns, and the choices change.
G4DN="$DATA/aws-g4dn-metal-8xT4-pcie.hwloc.xml"
timeout 60 "$TOPO" --plan --topo-file "$G4DN" --hosts 1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1 >"$WORK/out" 2>&1 || fail "--plan 16 hosts exited $?"
expect_line '^== Plan$'
expect_line '^16 ranks on 16 hosts; LOOM_ALGO=\(unset\)'
expect_line '^AllReduce \(size: the buffer\):$'
expect_line '^  8 B +(tree|halvingdoubling) +\(model: ring [0-9.]+ us, tree [0-9.]+ us, halvingdoubling [0-9.]+ us, allpairs [0-9.]+ us\)$'
expect_line '^  64 MiB +ring +\(model: ring [0-9.]+ us'
expect_line '^  choice by size: (tree|halvingdoubling), .*ring from [0-9]+ B$'
expect_line '^AllGather \(size: the whole result\):$'
expect_line '^  8 B +bruck '
expect_line '^ReduceScatter \(size: the whole input\):$'
expect_line '^Broadcast \(size: the buffer\):$'
# The rooted schedules and the barriers are weighed too: on 16 hosts a
# tree's 4 hops, where a chain takes 15, and dissemination's 4 rounds of
# one message.
expect_line '^  8 B +(tree|binomial) +\(model: ring [0-9.]+ us, tree [0-9.]+ us, binomial [0-9.]+ us\)$'
expect_line '^  64 MiB +ring +\(model: ring [0-9.]+ us, tree [0-9.]+ us, binomial [0-9.]+ us\)$'
expect_line '^Barrier: dissemination +\(model: ring [0-9.]+ us, allpairs [0-9.]+ us, dissemination [0-9.]+ us\)$'
grep -q '^== Topology' "$WORK/out" && fail "--plan printed the topology too"
# Several ranks per host: the model weighs the leaders and the steps with
# the flat schedules: on two hosts the leaders, then the steps; on 16 hosts
# of 8 the flat ring takes the largest calls back.
timeout 60 "$TOPO" --plan --topo-file "$G4DN" --hosts 4,4 >"$WORK/out" 2>&1 || fail "--plan 4,4 exited $?"
expect_line '^  choice by size: hostleaders, hierarchical from 13616 B$'
expect_line '^  8 B +hostleaders +\(model: ring [0-9.]+ us, .*hostleaders [0-9.]+ us, hierarchical [0-9.]+ us\); across hosts: allpairs$'
expect_line '^  64 MiB +hierarchical +\(model: .*\); across hosts: ring$'
timeout 60 "$TOPO" --plan --topo-file "$G4DN" --hosts 8,8,8,8,8,8,8,8,8,8,8,8,8,8,8,8 >"$WORK/out" 2>&1 || fail "--plan 16x8 exited $?"
expect_line '^  choice by size: hostleaders, hierarchical from [0-9]+ B, ring from [0-9]+ B$'
# 8 ranks over both sockets, a core each and their streams within what the
# memory copies: a large Broadcast takes the chain (each rank copies a
# chunk twice, a binary tree's inner ranks three times). 96 ranks, two a core, share the
# copies: a Broadcast's are alike in every tree, and the trees' shorter
# paths win at every size.
timeout 60 "$TOPO" --plan --topo-file "$G4DN" --ranks 8 >"$WORK/out" 2>&1 || fail "--plan 8 ranks exited $?"
expect_line '^8 ranks on 1 host, 2 sockets a host; LOOM_ALGO'
[[ $(grep -A6 '^Broadcast' "$WORK/out" | grep -c '^  choice by size: tree, ring from [0-9]* B$') -eq 1 ]] ||
  fail "8 ranks with a core each: a large Broadcast does not take the chain"
timeout 60 "$TOPO" --plan --topo-file "$G4DN" --ranks 96 >"$WORK/out" 2>&1 || fail "--plan 96 ranks exited $?"
expect_line '^96 ranks on 1 host, 2 sockets a host, 2.00 ranks per CPU \(they run in turns\); LOOM_ALGO'
[[ $(grep -A6 '^Broadcast' "$WORK/out" | grep -c '^  choice by size: binomial, tree from [0-9]* B$') -eq 1 ]] ||
  fail "96 ranks two a core: a Broadcast takes the chain at some size"
# Placed round robin over the two sockets, the ranks' steps between them
# cross the interconnect.
timeout 60 "$TOPO" --plan --topo-file "$G4DN" --ranks 16 --map-by socket >"$WORK/out" 2>&1 || fail "--plan 16 ranks by socket exited $?"
expect_line '^16 ranks on 1 host, 2 sockets a host; LOOM_ALGO'
timeout 60 "$TOPO" --plan --topo-file "$G4DN" --ranks 16 --map-by core >"$WORK/out" 2>&1 || fail "--plan 16 ranks by core exited $?"
expect_line '^16 ranks on 1 host; LOOM_ALGO'

# LOOM_ALGO applies as at init: left alone, the tree runs at every size.
LOOM_ALGO=allreduce:tree timeout 60 "$TOPO" --plan --ranks 8 >"$WORK/out" 2>&1 || fail "--plan LOOM_ALGO=allreduce:tree exited $?"
expect_line '^  choice by size: tree$'
# Bad input: a sentence and an exit code.
if LOOM_ALGO=allreduce:spiral "$TOPO" --plan --ranks 4 >"$WORK/out" 2>&1; then fail "--plan took LOOM_ALGO=allreduce:spiral"; fi
expect_line "spiral"
rc=0; "$TOPO" --plan --json >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "--plan --json exited $rc, not 2"
expect_line '^loom-topo: --plan prints text alone'
pass "--plan: 16 and 4+4 hosts, ranks sharing CPUs, LOOM_ALGO, bad input"

# --calibrate: measures shared memory on 3 local ranks, writes a file that
# LOOM_TUNING_FILE loads and --plan then names; a bad file is a sentence.
# Bound to 2 CPUs, the 3 ranks take turns: the ring on 2 ranks gives the
# step without them, and the switches are fitted from the difference.
# The network's constants in the file (--calibrate-network's) are kept. A
# measurement that tests running beside it made too noisy to fit is taken
# again by --calibrate itself.
printf 'network latency_us 33\n' >"$WORK/cal.tuning"
timeout 280 taskset -c 0,1 "$TOPO" --calibrate "$WORK/cal.tuning" --ranks 3 >"$WORK/out" 2>&1 || fail "--calibrate exited $?"
expect_line "^measured on 3 ranks of this host's 2 CPUs"
expect_line '^  AllReduce ring:( [0-9.e+]+){5}$'
expect_line '^  AllReduce ring on 2 ranks: [0-9.e+]+ us per step$'
expect_line '^  memory: 2 CPUs copying at once: [0-9.e+]+ bytes/us together$'
expect_line '^  AllGather bruck:( [0-9.e+]+){5}$'
expect_line '^  AllReduce registered:( [0-9.e+]+){5}$'
# Cross-memory attach is timed where the ranks may read each other's memory
# (ptrace rules); elsewhere a sentence says why and its constants stay.
if grep -Eq '^  AllReduce direct:( [0-9.e+]+){5}$' "$WORK/out"; then
  grep -q '^direct efficiency 0.9$' "$WORK/cal.tuning" && fail "--calibrate timed cross-memory attach but kept its constants"
else
  expect_line '^loom-topo --calibrate: not timing cross-memory attach: '
  expect_line '^  AllReduce direct: not timed \(the sentence above says why\); its constants stay as they were$'
fi
expect_line "^written to $WORK/cal.tuning"
grep -Eq '^shm latency_us [0-9.e+-]+$' "$WORK/cal.tuning" || fail "--calibrate wrote no shm latency"
grep -Eq '^tree efficiency [0-9.e+-]+$' "$WORK/cal.tuning" || fail "--calibrate wrote no tree efficiency"
grep -Eq '^registered efficiency [0-9.e+-]+$' "$WORK/cal.tuning" || fail "--calibrate wrote no registered efficiency"
grep -Eq '^cpu switch_us [0-9.e+-]+$' "$WORK/cal.tuning" || fail "--calibrate wrote no switch"
grep -Eq '^memory bytes_per_us [0-9.e+-]+$' "$WORK/cal.tuning" || fail "--calibrate wrote no memory bandwidth"
grep -q '^network latency_us 33$' "$WORK/cal.tuning" || fail "--calibrate lost the file's network latency"
# One socket here: the interconnect keeps its built-in constants.
grep -q '^socket latency_us 0.8$' "$WORK/cal.tuning" || fail "--calibrate changed the interconnect on one socket"
grep -q '^  sockets ' "$WORK/out" && fail "--calibrate measured an interconnect on one socket"
# The last measurement's (an earlier one may have been too busy to fit).
measured_8b=$(awk '/^  AllReduce ring:/ { v = $3 } END { print v }' "$WORK/out")
LOOM_TUNING_FILE="$WORK/cal.tuning" timeout 60 "$TOPO" --plan --ranks 3 >"$WORK/out" 2>&1 || fail "--plan with the calibrated file exited $?"
expect_line "constants from LOOM_TUNING_FILE=$WORK/cal.tuning"
# On a machine of 2 CPUs the plan's 3 ranks take turns as the calibration's
# did: the fitted constants give back the ring's measured 8 B time (the
# latency; its bytes add under 1%).
if [[ $(nproc --all) -eq 2 ]]; then
  expect_line '^3 ranks on 1 host, 1.50 ranks per CPU \(they run in turns\)'
  estimated_8b=$(sed -nE 's/^  8 B .*model: ring ([0-9.]+) us.*/\1/p' "$WORK/out" | head -1)
  awk -v m="$measured_8b" -v e="$estimated_8b" 'BEGIN { exit !(e > 0 && e / m > 0.98 && e / m < 1.03) }' ||
    fail "the calibrated model puts the 8 B ring AllReduce at $estimated_8b us, measured $measured_8b us"
else
  echo "note: $(nproc --all) CPUs here: the calibrated 8 B estimate is checked where the plan's ranks take turns as the calibration's (2 CPUs)"
fi
printf 'shm latency_us 1\ntree speed 2\n' >"$WORK/bad.tuning"
if LOOM_TUNING_FILE="$WORK/bad.tuning" "$TOPO" --plan --ranks 3 >"$WORK/out" 2>&1; then fail "--plan took a bad tuning file"; fi
expect_line "^loom-topo: $WORK/bad.tuning:2: tree has no 'speed'"
grep -q '== Plan' "$WORK/out" && fail "--plan printed half a section before its error"
# A file that puts CPUs 0 and 1 on two sockets: the interconnect between
# them is measured (a cache line's trip; CPU 0 copying out of CPU 1's memory).
LOOM_TOPO_FILE="$DATA/synthetic-2socket-2cpu.nccl-topo.xml" timeout 280 taskset -c 0,1 \
  "$TOPO" --calibrate "$WORK/sockets.tuning" --ranks 2 >"$WORK/out" 2>&1 || fail "--calibrate on two sockets exited $?"
expect_line "^  sockets 0 and 1: a cache line crosses in [0-9.e+]+ ns \\(socket 0 has one CPU: the whole trip counts\\); socket 0's 1 CPU copies [0-9.e+]+ bytes/us out of socket 1's memory$"
shm_latency=$(awk '$1 == "shm" && $2 == "latency_us" { print $3 }' "$WORK/sockets.tuning")
awk -v shm="$shm_latency" '$1 == "socket" && $2 == "latency_us" { found = 1; exit !($3 >= shm) } END { exit !found }' \
  "$WORK/sockets.tuning" || fail "--calibrate on two sockets put a step across them below one within: $(cat "$WORK/sockets.tuning")"
grep -Eq '^socket bytes_per_us [0-9.e+]+$' "$WORK/sockets.tuning" || fail "--calibrate on two sockets wrote no interconnect bandwidth"
grep -q '^socket bytes_per_us 20000$' "$WORK/sockets.tuning" && fail "--calibrate on two sockets kept the built-in bandwidth"
# Local ranks over another transport are not what it times.
rc=0; LOOM_TRANSPORTS=tcp timeout 20 "$TOPO" --calibrate "$WORK/x.tuning" --ranks 2 >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 1 ]] || fail "--calibrate with LOOM_TRANSPORTS=tcp exited $rc, not 1"
expect_line "^loom-topo: --calibrate times shared memory between local ranks, but LOOM_TRANSPORTS='tcp' connects them over tcp: unset it, or let it include shm$"
[[ -e "$WORK/x.tuning" ]] && fail "--calibrate with LOOM_TRANSPORTS=tcp wrote a file"
rc=0; "$TOPO" --calibrate "$WORK/x.tuning" --hosts 2,2 >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "--calibrate --hosts exited $rc, not 2"
# It measures this machine: a file describing another is refused.
rc=0; "$TOPO" --calibrate "$WORK/x.tuning" --topo-file "$G4DN" >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "--calibrate --topo-file exited $rc, not 2"
expect_line '^loom-topo: --calibrate measures ranks of this host alone: leave out .*--hosts and --topo-file$'
# An existing file that is no tuning file is refused before measuring, and kept.
printf 'not a tuning file\n' >"$WORK/notes.txt"
rc=0; timeout 20 "$TOPO" --calibrate "$WORK/notes.txt" --ranks 2 >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 1 ]] || fail "--calibrate over a file that is no tuning file exited $rc, not 1"
expect_line "is not a tuning file to update: remove it or name another file$"
grep -qx 'not a tuning file' "$WORK/notes.txt" || fail "--calibrate changed a file it refused"
# --calibrate-network runs inside a job across hosts: alone, a sentence.
rc=0; env -u RANK -u OMPI_COMM_WORLD_RANK -u SLURM_PROCID "$TOPO" --no-versions --calibrate-network "$WORK/n.tuning" \
  >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 1 ]] || fail "--calibrate-network outside a job exited $rc, not 1"
expect_line "^loom-topo: --calibrate-network runs as every rank of a job across hosts: launch it with loomrun"
rc=0; "$TOPO" --calibrate-network "$WORK/n.tuning" --plan >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "--calibrate-network --plan exited $rc, not 2"
pass "--calibrate: 3 ranks, a file --plan loads, the network's constants kept; bad files and options refused"

# --simulate: the schedules on virtual ranks, results checked by the
# simulator itself (a wrong one is an error and exit 1); the unit tests
# (simulator_test.cc) cover the schedules and the timeline.
timeout 120 "$TOPO" --simulate --hosts 2 --ranks-per-host 3 --sizes 8,4K --collectives allreduce,allgather \
  --plot "$WORK/sim.png" >"$WORK/out" 2>&1 || fail "--simulate 2x3 exited $?"
expect_line '^6 virtual ranks on 2 hosts'
expect_line '^AllReduce 8 B:'
expect_line '^AllGather 4 KiB:'
expect_line '^  6 +2 +tree +[0-9.]+ +[0-9.]+ +[0-9]+ '
# AllGather in steps on hosts of 3 and 1 (the third rank's block in a second round):
awk '/^AllGather 4 KiB:/ { on = 1 } on' "$WORK/out" | grep -Eq '^  4 +2 +hierarchical +[0-9.]+ +[0-9.]+ +[0-9]+ ' ||
  fail "no simulated AllGather in steps on 4 ranks of hosts of 3 and 1"
expect_line '^  6 +2 +auto .*\((hierarchical|hostleaders)\)$'
[[ -s "$WORK/sim.png" ]] || fail "--simulate --plot drew nothing"
rc=0; "$TOPO" --simulate --hosts 2,3 --ranks-per-host 4 >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "--hosts 2,3 --ranks-per-host 4 exited $rc, not 2"
expect_line '^loom-topo: with --ranks-per-host, --hosts gives the number of hosts'
rc=0; "$TOPO" --simulate --sizes 8,0 >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "--sizes 8,0 exited $rc, not 2"
expect_line "^loom-topo: --sizes 8,0: '0' is not a size"
rc=0; "$TOPO" --simulate --collectives allreduce,spiral >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "--collectives spiral exited $rc, not 2"
expect_line "^loom-topo: --collectives allreduce,spiral: 'spiral' is not one of"
rc=0; "$TOPO" --simulate --hosts 64 --ranks-per-host 65 >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "4160 ranks exited $rc, not 2"
expect_line '^loom-topo: --simulate runs at most 4096 ranks; 4160 were asked for'
rc=0; "$TOPO" --plot "$WORK/x.png" >"$WORK/out" 2>&1 || rc=$?
[[ $rc -eq 2 ]] || fail "--plot without --simulate exited $rc, not 2"
pass "--simulate: 2 x 3 ranks, two collectives, a plot; bad options refused"
