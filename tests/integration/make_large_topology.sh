#!/usr/bin/env bash
# Writes a synthetic NCCL topology XML with GPUS GPUs (a multiple of 4) to
# stdout, for checking that loom-topo's reports scale (docs/RELIABILITY.md,
# "Topology input"). No real machine has 1000 GPUs on one host; this one
# has every path class loom-topo prints, in proportions that make each
# report do its full work:
#
#   8 NUMA nodes (32 CPUs each) on 2 sockets; GPUs spread over them in
#   blocks of 4. Each block is one PCI switch holding two switches with two
#   GPUs each, and a ConnectX NIC on the outer switch. Inside a block GPUs
#   0-1-2 form an NVLink chain (4 lanes each) and GPU 3 has none, so:
#     GPU 4k   - GPU 4k+1  NVL (NVLink)      GPU 4k   - GPU 4k+2  NVB (via 4k+1)
#     GPU 4k+2 - GPU 4k+3  PIX (one switch)  GPU 4k   - GPU 4k+3  PXB (three switches)
#     GPU 4k   - NIC k     PXB               blocks on one NUMA node: PHB
#     blocks on other NUMA nodes: SYS
#
# GPU i has bus id dddd:bb:00.0 with domain i/128 + 1, bus 2*(i%128) + 1;
# switches and NICs use domains 0x1000 and up, so every id is unique.
#
# Usage: make_large_topology.sh GPUS > big.nccl-topo.xml
set -euo pipefail

if [[ $# -ne 1 || ! $1 =~ ^[0-9]+$ || $(($1 % 4)) -ne 0 || $1 -eq 0 ]]; then
  echo "usage: $0 GPUS (a positive multiple of 4)" >&2
  exit 2
fi
gpus=$1
numas=8
blocks=$((gpus / 4))

# Each sets $id (printf -v: a subshell per id made 1000 GPUs take seconds).
gpu_busid() { printf -v id '%04x:%02x:00.0' $(($1 / 128 + 1)) $((2 * ($1 % 128) + 1)); }
# Switches: three per block (outer, two inner); the NIC one per block.
switch_busid() { printf -v id '%04x:%02x:00.0' $((0x1000 + $1 / 64)) $((4 * ($1 % 64) + $2)); }
nic_busid() { printf -v id '%04x:%02x:00.0' $((0x1000 + $1 / 64)) $((4 * ($1 % 64) + 3)); }

# NCCL's affinity: 32-bit words, most significant first; NUMA node n owns word n.
affinity() {
  local words=() w
  for ((w = numas - 1; w >= 0; w--)); do
    if ((w == $1)); then words+=(ffffffff); else words+=(00000000); fi
  done
  local IFS=,
  id="${words[*]}"
}

gpu() {  # index, depth of indentation
  local i=$1 pad=$2 peers=() p
  case $((i % 4)) in
    0) peers=($((i + 1))) ;;
    1) peers=($((i - 1)) $((i + 1))) ;;
    2) peers=($((i - 1))) ;;
  esac
  gpu_busid "$i"
  printf '%s<pci busid="%s" class="0x030200" vendor="0x10de" device="0x20b0" link_speed="16.0 GT/s PCIe" link_width="16">\n' \
    "$pad" "$id"
  printf '%s  <gpu dev="%d" sm="80" rank="%d" gdr="1">\n' "$pad" "$i" "$i"
  for p in ${peers[@]+"${peers[@]}"}; do
    gpu_busid "$p"
    printf '%s    <nvlink target="%s" count="4" tclass="0x030200"/>\n' "$pad" "$id"
  done
  printf '%s  </gpu>\n%s</pci>\n' "$pad" "$pad"
}

pcie_switch_open() {  # block, which switch (0 outer, 1 and 2 inner), indentation
  switch_busid "$1" "$2"
  printf '%s<pci busid="%s" class="0x060400" vendor="0x10b5" device="0x9781" link_speed="16.0 GT/s PCIe" link_width="16">\n' \
    "$3" "$id"
}

echo '<system version="1">'
for ((n = 0; n < numas; n++)); do
  affinity "$n"
  printf '  <cpu numaid="%d" affinity="%s" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143" package="%d">\n' \
    "$n" "$id" $((n / 4))
  for ((b = n; b < blocks; b += numas)); do
    pcie_switch_open "$b" 0 '    '
    for half in 0 1; do
      pcie_switch_open "$b" $((1 + half)) '      '
      gpu $((4 * b + 2 * half)) '        '
      gpu $((4 * b + 2 * half + 1)) '        '
      echo '      </pci>'
    done
    nic_busid "$b"
    printf '      <pci busid="%s" class="0x020700" vendor="0x15b3" device="0x101b" link_speed="16.0 GT/s PCIe" link_width="16">\n' \
      "$id"
    printf '        <nic>\n          <net name="mlx5_%d" speed="200000" port="1" gdr="1"/>\n        </nic>\n      </pci>\n' "$b"
    echo '    </pci>'
  done
  echo '  </cpu>'
done
echo '</system>'
