#!/usr/bin/env bash
# Installs what building and testing Loom needs, from Debian 12's packages.
# Does nothing (and needs no network) when everything is already there.
set -euo pipefail

packages=(
  build-essential cmake ninja-build pkg-config
  libhwloc-dev hwloc            # topology detection
  libibverbs-dev                # RDMA transport (builds without hardware)
  libopenmpi-dev openmpi-bin    # mpirun launch of the perf suite, peer comparison
  libssl-dev                    # HMAC-SHA256 for bootstrap admission
  libxml2-dev                   # NCCL topology XML files
  libgtest-dev libgmock-dev     # tests
  libbenchmark-dev              # micro-benchmarks
  clang libclang-rt-14-dev      # fuzzers (scripts/fuzz.sh): clang 14, libFuzzer and sanitizer runtimes
  python3
  python3-torch libtorch-dev python3-pytest pybind11-dev  # bindings/torch: the backend and its tests (libtorch-dev only recommends pybind11-dev)
  iproute2                      # ip and tc: scripts/loom-hosts.sh's fake hosts (tests/multihost)
  libgloo-dev gnuplot-nox       # perf/compare: the Gloo peer and the plots
  iperf3                        # perf/compare-hosts: the raw TCP probe between fake hosts
  doxygen                       # the API reference: cmake --build build --target docs
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "install-deps: missing packages: ${missing[*]}; run as root (or install them with sudo apt-get install)" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
apt-get install -y -qq --no-install-recommends "${missing[@]}"
