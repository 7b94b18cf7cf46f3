#!/usr/bin/env bash
# loom_torch against PyTorch 2.x on a Debian 12 machine, whose own torch is
# 1.13: builds Loom and the backend inside a Debian 13 root made with
# debootstrap (its python3-torch is 2.6, CPU), with this checkout mounted
# read-only, and runs the backend's suites there (test_collectives.py,
# test_ddp.py). 2.x takes a c10d::Backend where 1.13 takes a
# c10d::ProcessGroup; bindings/torch/csrc builds either from one source.
#
#   sudo bash scripts/torch2-check.sh [pytest arguments]
#   sudo bash scripts/torch2-check.sh --torch-suite [pytest arguments]
#
# --torch-suite runs PyTorch 2.x's own distributed suite on loom instead
# (bindings/torch/tests/torch_distributed_suite.py, LOOM_TORCH_SUITE=loom;
# about 15 minutes).
#
# The root stays in LOOM_TORCH2_ROOT (default /var/tmp/loom-trixie, ~2 GB)
# for the next run: the first run downloads ~600 MB and takes ~15 minutes,
# later ones rebuild and test in ~5. Needs root (chroot, mounts) and the
# network to deb.debian.org.
set -euo pipefail
cd "$(dirname "$0")/.."
tests="test_collectives.py test_ddp.py"
if [ "${1:-}" = --torch-suite ]; then
  tests=torch_distributed_suite.py
  shift
fi
[ "$(id -u)" -eq 0 ] || { echo "torch2-check: run as root (debootstrap, chroot, mount)" >&2; exit 1; }

root=${LOOM_TORCH2_ROOT:-/var/tmp/loom-trixie}
packages=python3-torch,libtorch-dev,pybind11-dev,g++,cmake,ninja-build,pkg-config,libhwloc-dev,libssl-dev,libxml2-dev,python3-pytest,python3-setuptools,ca-certificates

# A root whose debootstrap did not finish is made again from nothing.
if [ ! -f "$root/.debootstrap-complete" ]; then
  command -v debootstrap >/dev/null || { apt-get update -qq && apt-get install -y -qq debootstrap; }
  echo "torch2-check: making a Debian 13 root in $root (downloads ~600 MB)"
  rm -rf "$root"
  # --include resolves no virtual packages, so apt adds the packages inside.
  debootstrap --variant=minbase trixie "$root" http://deb.debian.org/debian >"$root.debootstrap.log" 2>&1 ||
    { tail -n 20 "$root.debootstrap.log" >&2; exit 1; }
  echo "deb http://deb.debian.org/debian trixie main" >"$root/etc/apt/sources.list"
  touch "$root/.debootstrap-complete"
fi

mounts=()
cleanup() {
  for ((i = ${#mounts[@]} - 1; i >= 0; i--)); do
    umount "${mounts[i]}" 2>/dev/null || umount -l "${mounts[i]}" || true
  done
}
trap cleanup EXIT
mount_into() {  # mount_into TARGET mount-arguments...
  local target=$1
  shift
  mkdir -p "$target"
  mount "$@" "$target"
  mounts+=("$target")
}
mount_into "$root/proc" -t proc proc
mount_into "$root/sys" --bind /sys  # hwloc reads the machine there, as outside
mount -o remount,bind,ro "$root/sys"
mount_into "$root/dev/shm" -t tmpfs tmpfs
mount_into "$root/src/loom" --bind "$PWD"
mount -o remount,bind,ro "$root/src/loom"

chroot "$root" env DEBIAN_FRONTEND=noninteractive bash -c "
  set -e
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends ${packages//,/ } >/dev/null
  python3 -c 'import torch; print(\"torch2-check: PyTorch\", torch.__version__)'
  cmake -S /src/loom -B /root/build -G Ninja -DCMAKE_BUILD_TYPE=Release -DLOOM_BUILD_TESTS=OFF \
    -DCMAKE_UNITY_BUILD=ON -DCMAKE_UNITY_BUILD_BATCH_SIZE=16 >/dev/null
  cmake --build /root/build --target loom loomrun loom_torch >/root/build.log 2>&1 ||
    { tail -n 40 /root/build.log; exit 1; }
"
# Debian's torch 2.x is built without libuv, which TCPStore asks for by default.
chroot "$root" env LOOM_TORCH_BUILD=/root/build/torch/lib LOOMRUN=/root/build/tools/loomrun USE_LIBUV=0 \
  PYTHONDONTWRITEBYTECODE=1 LOOM_TORCH_SUITE=loom TESTS="$tests" bash -c 'cd /src/loom/bindings/torch/tests &&
  exec python3 -m pytest -q -p no:cacheprovider -rfE $TESTS "$@"' torch2-check "$@"
