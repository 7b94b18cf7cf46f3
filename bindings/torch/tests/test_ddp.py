"""DistributedDataParallel on the "loom" backend trains as it does on gloo:
from one seed, with the same data, the parameters after a few steps agree."""
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel

import ranks


def train(group, rank, steps=4):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.ReLU(), torch.nn.Linear(64, 8))
    ddp = DistributedDataParallel(model, process_group=group, bucket_cap_mb=0.01)  # several buckets
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.1)
    generator = torch.Generator().manual_seed(100 + rank)
    losses = []
    for _ in range(steps):
        x = torch.randn(16, 32, generator=generator)
        y = torch.randn(16, 8, generator=generator)
        optimizer.zero_grad()
        loss = torch.nn.functional.mse_loss(ddp(x), y)
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return [p.detach().clone() for p in model.parameters()], losses


def ddp_body(rank, size):
    gloo = dist.new_group(backend="gloo")
    ours, our_losses = train(dist.group.WORLD, rank)
    theirs, their_losses = train(gloo, rank)
    for a, b in zip(ours, theirs):
        assert torch.allclose(a, b, rtol=1e-5, atol=1e-6), (a - b).abs().max().item()
    assert all(abs(a - b) < 1e-5 for a, b in zip(our_losses, their_losses)), (our_losses, their_losses)
    # Every rank holds the same parameters.
    for p in ours:
        every = [torch.zeros_like(p) for _ in range(size)]
        dist.all_gather(every, p)
        assert all(torch.equal(every[0], q) for q in every)


def test_ddp_matches_gloo_step_by_step():
    ranks.run(2, ddp_body)


def test_ddp_on_three_ranks():
    ranks.run(3, ddp_body)


def test_the_example_prints_the_same_losses_on_loom_and_gloo():
    """examples/ddp_train.py under loomrun: the same losses step by step."""
    import os
    import subprocess
    import sys

    import pytest

    loomrun = os.environ.get("LOOMRUN")
    if not loomrun:
        pytest.skip("LOOMRUN is not set (ctest sets it)")
    example = os.path.join(os.path.dirname(__file__), "..", "..", "..", "examples", "ddp_train.py")
    env = dict(os.environ, PYTHONPATH=os.path.abspath(ranks.conftest.BUILD))
    losses = {}
    for backend in ("loom", "gloo"):
        run = subprocess.run([loomrun, "-n", "2", "--timeout", "300", sys.executable, example, "--backend", backend,
                              "--steps", "3", "--warmup", "1", "--hidden", "256", "--width", "64"],
                             env=env, capture_output=True, text=True, timeout=360)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "# mean step time after 1 warm-up steps" in run.stdout, run.stdout
        losses[backend] = [line.split()[3] for line in run.stdout.splitlines() if line.startswith("step")]
        assert len(losses[backend]) == 3, run.stdout
    assert losses["loom"] == losses["gloo"]
