"""PyTorch's own distributed test suite
(torch.testing._internal.distributed.distributed_test) on a backend, run the
way PyTorch runs it on gloo (its test/distributed/test_distributed_spawn.py):
each test spawns WORLD_SIZE ranks that meet through a file:// store.

    LOOM_TORCH_SUITE=loom  python3 -m pytest torch_distributed_suite.py
    LOOM_TORCH_SUITE=gloo  python3 -m pytest torch_distributed_suite.py
    LOOM_TORCH_SUITE=gated python3 -m pytest torch_distributed_suite.py

The suite knows only PyTorch's own backends, so a third-party backend is
told apart in two ways:

- loom: BACKEND=loom, with loom listed where the suite lists what a backend
  has (a plugin backend with DDP and subgroups): every test open to "a
  backend that is not nccl" runs on loom.
- gated: the tests the suite opens to gloo alone, by name, run on loom: the
  suite is imported with BACKEND=gloo (its decorators read it then) and
  then runs with BACKEND=loom. torch.distributed.monitored_barrier, which
  refuses every backend but gloo, goes to loom_torch.monitored_barrier.
- gloo: the baseline, unchanged.

scripts/torch-suite.sh runs all three and compares them.
"""
import os
import sys

import conftest  # noqa: F401  (the build's loom_torch on sys.path)

MODE = os.environ.get("LOOM_TORCH_SUITE", "loom")
if MODE not in ("loom", "gloo", "gated"):
    raise SystemExit(f"LOOM_TORCH_SUITE={MODE!r}: say loom, gloo or gated")
os.environ["BACKEND"] = "gloo" if MODE in ("gloo", "gated") else "loom"
os.environ.setdefault("WORLD_SIZE", "3")

import torch.distributed as dist  # noqa: E402

if MODE != "gloo":
    import loom_torch  # noqa: E402  (registers "loom")
    from torch.testing._internal.common_distributed import DistTestCases  # noqa: E402

    if MODE == "loom":
        for feature in ("plugin", "ddp", "subgroup"):
            DistTestCases.backend_feature[feature].add("loom")

from torch.testing._internal.common_utils import run_tests  # noqa: E402
from torch.testing._internal.distributed import distributed_test  # noqa: E402
from torch.testing._internal.distributed.distributed_test import DistributedTest, TestDistBackend  # noqa: E402

if MODE == "gated":
    distributed_test.BACKEND = "loom"
    dist.monitored_barrier = loom_torch.monitored_barrier


class TestDistBackendWithSpawn(TestDistBackend, DistributedTest._DistTestBase):
    def setUp(self):
        super().setUp()
        self._spawn_processes()


if __name__ == "__main__":
    sys.exit(run_tests())
