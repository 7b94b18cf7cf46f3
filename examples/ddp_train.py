#!/usr/bin/env python3
"""Trains an MLP with DistributedDataParallel on synthetic data, on Loom or Gloo.

    loomrun -n 2 /usr/bin/python3 examples/ddp_train.py              # Loom
    loomrun -n 2 /usr/bin/python3 examples/ddp_train.py --backend gloo
    torchrun --nproc_per_node 2 examples/ddp_train.py                 # torchrun works alike

Both launchers set RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT
(env://). Every rank makes its own batches from a seed of its own, so
nothing is downloaded; the model starts from one seed on every rank, so two
runs with the same options print the same losses whatever the backend.
Rank 0 prints the loss and the time of every step, then the mean step time
after the warm-up steps. --hidden 2048 --layers 8 is a model of about 26 M
parameters. loom_torch must be importable: installed, or on PYTHONPATH
(build/torch/lib of a build tree).
"""
import argparse
import os
import time

import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel


def model_of(width, hidden, layers, classes):
    parts = [torch.nn.Linear(width, hidden), torch.nn.ReLU()]
    for _ in range(layers - 2):
        parts += [torch.nn.Linear(hidden, hidden), torch.nn.ReLU()]
    parts.append(torch.nn.Linear(hidden, classes))
    return torch.nn.Sequential(*parts)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", default="loom", choices=["loom", "gloo"])
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=3, help="steps left out of the mean step time")
    parser.add_argument("--batch", type=int, default=64, help="samples per rank per step")
    parser.add_argument("--width", type=int, default=512, help="input features")
    parser.add_argument("--hidden", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=4)
    parser.add_argument("--classes", type=int, default=10)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--threads", type=int, default=1, help="torch intra-op threads per rank")
    parser.add_argument("--bucket-view", action="store_true",
                        help="DDP's gradient_as_bucket_view: gradients live in the communication buckets, "
                             "saving a copy each way per step")
    args = parser.parse_args()
    if args.backend == "loom":
        import loom_torch  # noqa: F401  (registers "loom")

    torch.set_num_threads(args.threads)
    dist.init_process_group(args.backend, init_method="env://")
    rank, size = dist.get_rank(), dist.get_world_size()
    torch.manual_seed(args.seed)
    model = model_of(args.width, args.hidden, args.layers, args.classes)
    parameters = sum(p.numel() for p in model.parameters())
    ddp = DistributedDataParallel(model, gradient_as_bucket_view=args.bucket_view)
    optimizer = torch.optim.SGD(ddp.parameters(), lr=0.01, momentum=0.9)
    data = torch.Generator().manual_seed(args.seed * 1000 + rank + 1)
    if rank == 0:
        print(f"# {args.backend}, {size} ranks, {parameters / 1e6:.1f} M parameters, batch {args.batch} per rank",
              flush=True)
    times = []
    for step in range(args.steps):
        x = torch.randn(args.batch, args.width, generator=data)
        y = torch.randint(0, args.classes, (args.batch,), generator=data)
        start = time.perf_counter()
        optimizer.zero_grad()
        loss = torch.nn.functional.cross_entropy(ddp(x), y)
        loss.backward()
        optimizer.step()
        elapsed = time.perf_counter() - start
        times.append(elapsed)
        # The loss of the whole step, averaged over ranks, as every rank sees it.
        total = loss.detach().clone()
        dist.all_reduce(total)
        if rank == 0:
            print(f"step {step:3d}  loss {total.item() / size:.6f}  {elapsed * 1000:.1f} ms", flush=True)
    if rank == 0 and len(times) > args.warmup:
        kept = times[args.warmup:]
        print(f"# mean step time after {args.warmup} warm-up steps: {sum(kept) / len(kept) * 1000:.1f} ms", flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    if "RANK" not in os.environ:
        raise SystemExit("ddp_train.py: run it under loomrun or torchrun (RANK is not set)")
    main()
