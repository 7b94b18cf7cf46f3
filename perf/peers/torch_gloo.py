#!/usr/bin/env python3
"""PyTorch gloo-backend benchmark, the PyTorch column of perf/compare.

    loomrun -n N /usr/bin/python3 perf/peers/torch_gloo.py -c allreduce|allgather|reducescatter \
        [-b MIN] [-e MAX] [-f FACTOR] [-n ITERS] [-w WARMUP] [-C 0|1] [-s STORE_DIR] [-B gloo|loom]

-B loom runs the same calls on the "loom" backend (loom_torch on
PYTHONPATH: build/torch/lib), to set Loom under PyTorch beside gloo.

Same conventions and output as mpi_collectives.c / gloo_collectives.cc:
float32 sum, nccl-tests sizes (whole buffer for allgather / reducescatter,
count rounded down to a multiple of the rank count), blocking calls, time
averaged over ranks, busbw factors 2(n-1)/n for allreduce and (n-1)/n
otherwise. Rank 0 prints '#' comments, then per size:

    size count time_us algbw busbw wrong

Calls: dist.all_reduce (in place: PyTorch has no out-of-place all_reduce),
dist.all_gather_into_tensor (or dist.all_gather into a list on old
versions), dist.reduce_scatter_tensor (or dist.reduce_scatter with lists);
a collective the installed PyTorch's gloo backend lacks is reported with a
'# unsupported' line and exit status 3. Ranks come from RANK / WORLD_SIZE
(loomrun, torchrun); they meet through a file store in STORE_DIR (-s,
$GLOO_STORE_DIR, or /tmp/loom-torch-store-$MASTER_PORT).
"""
import argparse
import os
import sys
import time


def parse_size(text):
    mult = {"k": 1 << 10, "m": 1 << 20, "g": 1 << 30}
    text = text.strip()
    if text and text[-1].lower() in mult:
        return int(float(text[:-1]) * mult[text[-1].lower()])
    return int(float(text))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-c", required=True, choices=["allreduce", "allgather", "reducescatter"])
    ap.add_argument("-b", default="8")
    ap.add_argument("-e", default="8")
    ap.add_argument("-f", type=int, default=2)
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("-w", type=int, default=5)
    ap.add_argument("-C", type=int, default=1)
    ap.add_argument("-s", default=os.environ.get("GLOO_STORE_DIR", ""))
    ap.add_argument("-B", default="gloo", choices=["gloo", "loom"],
                    help="the torch.distributed backend (loom: loom_torch, on PYTHONPATH)")
    args = ap.parse_args()

    import torch
    import torch.distributed as dist

    rank = int(os.environ.get("RANK", os.environ.get("OMPI_COMM_WORLD_RANK", "-1")))
    nranks = int(os.environ.get("WORLD_SIZE", os.environ.get("OMPI_COMM_WORLD_SIZE", "-1")))
    if rank < 0 or nranks < 1:
        sys.exit("torch_gloo.py: set RANK and WORLD_SIZE (launch with loomrun -n N)")
    store_dir = args.s or "/tmp/loom-torch-store-" + os.environ.get("MASTER_PORT", "default")
    os.makedirs(store_dir, exist_ok=True)
    store = dist.FileStore(os.path.join(store_dir, "store"), nranks)
    if args.B == "loom":
        import loom_torch  # noqa: F401  (registers "loom")
    dist.init_process_group(args.B, store=store, rank=rank, world_size=nranks)
    torch.set_num_threads(1)

    coll = args.c
    minb, maxb, factor = parse_size(args.b), parse_size(args.e), args.f
    busfactor = 2.0 * (nranks - 1) / nranks if coll == "allreduce" else (nranks - 1) / nranks

    def make_call(count, send, recv):
        block = count // nranks
        if coll == "allreduce":
            return lambda: dist.all_reduce(recv[:count])
        if coll == "allgather":
            src = send[rank * block:(rank + 1) * block]
            if hasattr(dist, "all_gather_into_tensor"):
                return lambda: dist.all_gather_into_tensor(recv[:count], src)
            outs = list(recv[:count].split(block))
            return lambda: dist.all_gather(outs, src)
        if hasattr(dist, "reduce_scatter_tensor"):
            return lambda: dist.reduce_scatter_tensor(recv[:block], send[:count])
        ins = list(send[:count].split(block))
        return lambda: dist.reduce_scatter(recv[:block], ins)

    maxcount = max(1, maxb // 4)
    send = torch.zeros(maxcount, dtype=torch.float32)
    recv = torch.zeros(maxcount, dtype=torch.float32)
    if rank == 0:
        what = {"allreduce": "dist.all_reduce (in place)", "allgather": "dist.all_gather_into_tensor",
                "reducescatter": "dist.reduce_scatter_tensor"}[coll]
        print(f"# PyTorch {torch.__version__} {args.B} backend: {what}, {nranks} ranks, float32, blocking calls")
        print(f"# iters {args.n} warmup {args.w}; time averaged over ranks")
        print("# size count time_us algbw busbw wrong", flush=True)

    size = minb
    while size <= maxb:
        count = size // 4
        if coll != "allreduce":
            count = count // nranks * nranks
        if count == 0:
            if rank == 0:
                print(f"# {size}: 0 elements, skipped", flush=True)
        else:
            call = make_call(count, send, recv)
            try:
                for _ in range(args.w):
                    call()
            except RuntimeError as e:  # e.g. the gloo backend lacks this collective
                if rank == 0:
                    print(f"# unsupported: {coll}: {str(e).splitlines()[0]}", flush=True)
                sys.exit(3)
            dist.barrier()
            t0 = time.perf_counter()
            for _ in range(args.n):
                call()
            local = torch.tensor([(time.perf_counter() - t0) / args.n], dtype=torch.float64)
            dist.all_reduce(local)
            sec = local.item() / nranks
            wrong = 0
            if args.C:
                block = count // nranks
                idx = torch.arange(count, dtype=torch.float32)
                if coll == "allreduce":
                    recv[:count] = (rank + 1) + torch.remainder(idx, 7)
                    call()
                    expect = nranks * (nranks + 1) / 2 + nranks * torch.remainder(idx, 7)
                    got = recv[:count]
                elif coll == "allgather":
                    send[:count] = (rank + 1) + torch.remainder(idx, 7)  # only our block is sent
                    call()
                    expect = torch.div(idx, block, rounding_mode="floor") + 1 + torch.remainder(idx, 7)
                    got = recv[:count]
                else:
                    send[:count] = (rank + 1) + torch.remainder(idx, 7)
                    call()
                    mine = idx[rank * block:(rank + 1) * block]
                    expect = nranks * (nranks + 1) / 2 + nranks * torch.remainder(mine, 7)
                    got = recv[:block]
                bad = torch.tensor([float((got != expect).sum().item())], dtype=torch.float64)
                dist.all_reduce(bad)
                wrong = int(bad.item())
                send.zero_()
                recv.zero_()
            if rank == 0:
                algbw = count * 4 / sec / 1e9 if sec > 0 else 0.0
                print(f"{size} {count} {sec * 1e6:.3f} {algbw:.4f} {algbw * busfactor:.4f} {wrong}", flush=True)
        size *= factor
    dist.barrier()
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
