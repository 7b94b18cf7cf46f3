"""torch.distributed on the "loom" backend: every collective, every dtype
Loom has, 1-4 ranks, against results computed here from every rank's
input, and against the gloo backend in the same processes."""
import pytest
import torch
import torch.distributed as dist

import ranks

DTYPES = [torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.int8, torch.uint8, torch.int32,
          torch.int64, torch.bool]
FLOATS = {torch.float16, torch.bfloat16, torch.float32, torch.float64}
OPS = {"sum": dist.ReduceOp.SUM, "product": dist.ReduceOp.PRODUCT, "min": dist.ReduceOp.MIN,
       "max": dist.ReduceOp.MAX, "avg": dist.ReduceOp.AVG}
# From one element to several of Loom's slots (float32: 280 KB).
COUNTS = [1, 7, 1000, 70001]


def value(rank, count, dtype, op="sum"):
    """Rank `rank`'s input: small integers, so every reduction is exact."""
    index = torch.arange(count, dtype=torch.int64)
    if dtype == torch.bool:
        return (index + rank) % 3 == 0
    if op == "product":
        return ((index + rank) % 2 + 1).to(dtype)
    return ((index * 7 + rank * 3) % 11 + 1).to(dtype)


def reduced(size, count, dtype, op):
    """The reduction over every rank's input, computed here."""
    stack = torch.stack([value(r, count, dtype, op) for r in range(size)])
    if dtype == torch.bool:
        return stack.any(0) if op in ("sum", "max") else stack.all(0)
    wide = stack.to(torch.float64)
    out = {"sum": lambda: wide.sum(0), "product": lambda: wide.prod(0), "min": lambda: wide.amin(0),
           "max": lambda: wide.amax(0), "avg": lambda: wide.mean(0)}[op]()
    return out.to(dtype)


def ops_for(dtype):
    if dtype == torch.bool:
        return ["sum", "product", "min", "max"]
    return ["sum", "product", "min", "max"] + (["avg"] if dtype in FLOATS else [])


def assert_same(actual, expected, what):
    if actual.dtype in (torch.float16, torch.bfloat16):
        assert torch.allclose(actual.to(torch.float64), expected.to(torch.float64), rtol=1e-2, atol=1e-2), what
    else:
        assert torch.equal(actual, expected), f"{what}: {actual[:8].tolist()} != {expected[:8].tolist()}"


# ---------------------------------------------------------------- bodies

def all_reduce_body(rank, size):
    for dtype in DTYPES:
        for op in ops_for(dtype):
            for count in COUNTS:
                tensor = value(rank, count, dtype, op)
                dist.all_reduce(tensor, op=OPS[op])
                assert_same(tensor, reduced(size, count, dtype, op), f"all_reduce {op} {dtype} x{count}")


def broadcast_reduce_body(rank, size):
    for dtype in DTYPES:
        for count in COUNTS[:3]:
            for root in range(size):
                tensor = value(rank, count, dtype) if rank == root else torch.zeros(count, dtype=dtype)
                dist.broadcast(tensor, src=root)
                assert_same(tensor, value(root, count, dtype), f"broadcast {dtype} x{count} from {root}")
                tensor = value(rank, count, dtype)
                dist.reduce(tensor, dst=root, op=dist.ReduceOp.SUM)
                if rank == root:
                    assert_same(tensor, reduced(size, count, dtype, "sum"), f"reduce {dtype} x{count} to {root}")


def gather_scatter_family_body(rank, size):
    for dtype in DTYPES:
        for count in COUNTS[:3]:
            mine = value(rank, count, dtype)
            every = [value(r, count, dtype) for r in range(size)]
            outputs = [torch.zeros(count, dtype=dtype) for _ in range(size)]
            dist.all_gather(outputs, mine)
            for r in range(size):
                assert_same(outputs[r], every[r], f"all_gather {dtype} x{count} block {r}")
            flat = torch.zeros(count * size, dtype=dtype)
            dist.all_gather_into_tensor(flat, mine)
            assert_same(flat, torch.cat(every), f"all_gather_into_tensor {dtype} x{count}")

            inputs = [value(rank * size + r, count, dtype) for r in range(size)]
            out = torch.zeros(count, dtype=dtype)
            dist.reduce_scatter(out, inputs, op=dist.ReduceOp.SUM)
            expected = torch.stack([value(r * size + rank, count, dtype) for r in range(size)])
            expected = expected.any(0) if dtype == torch.bool else expected.to(torch.float64).sum(0).to(dtype)
            assert_same(out, expected, f"reduce_scatter {dtype} x{count}")
            out = torch.zeros(count, dtype=dtype)
            dist.reduce_scatter_tensor(out, torch.cat(inputs), op=dist.ReduceOp.SUM)
            assert_same(out, expected, f"reduce_scatter_tensor {dtype} x{count}")

            root = size - 1
            gathered = [torch.zeros(count, dtype=dtype) for _ in range(size)] if rank == root else None
            dist.gather(mine, gather_list=gathered, dst=root)
            if rank == root:
                for r in range(size):
                    assert_same(gathered[r], every[r], f"gather {dtype} x{count} from {r}")
            received = torch.zeros(count, dtype=dtype)
            dist.scatter(received, scatter_list=[value(10 + r, count, dtype) for r in range(size)]
                         if rank == 0 else None, src=0)
            assert_same(received, value(10 + rank, count, dtype), f"scatter {dtype} x{count}")


def all_to_all_body(rank, size):
    for dtype in [torch.float32, torch.int64, torch.bfloat16, torch.bool]:
        count = 5
        # Even: block r of every input goes to rank r.
        send = torch.cat([value(rank * 100 + r, count, dtype) for r in range(size)])
        recv = torch.zeros(count * size, dtype=dtype)
        dist.all_to_all_single(recv, send)
        assert_same(recv, torch.cat([value(r * 100 + rank, count, dtype) for r in range(size)]), f"even {dtype}")
        # Uneven: rank r sends r + q + 1 rows of 3 to rank q.
        rows = [rank + q + 1 for q in range(size)]
        send = torch.cat([value(rank * 100 + q, rows[q] * 3, dtype).view(-1, 3) for q in range(size)])
        recv_rows = [q + rank + 1 for q in range(size)]
        recv = torch.zeros(sum(recv_rows), 3, dtype=dtype)
        dist.all_to_all_single(recv, send, output_split_sizes=recv_rows, input_split_sizes=rows)
        expected = torch.cat([value(q * 100 + rank, recv_rows[q] * 3, dtype).view(-1, 3) for q in range(size)])
        assert_same(recv, expected, f"uneven {dtype}")
        # Lists of tensors of different sizes.
        outs = [torch.zeros(q + 2, dtype=dtype) for q in range(size)]
        dist.all_to_all(outs, [value(rank * 100 + q, rank + 2, dtype) for q in range(size)])
        for q in range(size):
            assert_same(outs[q], value(q * 100 + rank, q + 2, dtype), f"all_to_all {dtype} from {q}")


def point_to_point_body(rank, size):
    nxt, prv = (rank + 1) % size, (rank - 1) % size
    for dtype in [torch.float32, torch.int8, torch.float64]:
        for count in COUNTS:
            # Irecv before Isend on every rank, as MPI programs do.
            got = torch.zeros(count, dtype=dtype)
            recv = dist.irecv(got, src=prv)
            send = dist.isend(value(rank, count, dtype), dst=nxt)
            send.wait()
            recv.wait()
            assert_same(got, value(prv, count, dtype), f"ring {dtype} x{count}")
    got = torch.zeros(4)
    ops = [dist.P2POp(dist.irecv, got, prv), dist.P2POp(dist.isend, torch.full((4,), float(rank)), nxt)]
    for work in dist.batch_isend_irecv(ops):
        work.wait()
    assert torch.equal(got, torch.full((4,), float(prv)))
    if size > 1:
        # Tags: the sender sends tags 3, 1, 2 (the first of 1 MiB); the
        # receiver waits for them in the order 2, 3, 1, each blocking.
        sends = [dist.isend(value(rank * 10 + tag, 1 << 18 if tag == 3 else tag + 5, torch.float32), dst=nxt, tag=tag)
                 for tag in (3, 1, 2)]
        for tag in (2, 3, 1):
            got = torch.zeros(1 << 18 if tag == 3 else tag + 5)
            dist.recv(got, src=prv, tag=tag)
            assert_same(got, value(prv * 10 + tag, got.numel(), torch.float32), f"recv with tag {tag}")
        for work in sends:
            work.wait()
        # From any source: every other rank sends rank 0 one message of tag
        # 6; recv without src returns the sender, irecv's work names it.
        if rank == 0:
            senders = []
            for i in range(size - 1):
                got = torch.zeros(9)
                if i % 2 == 0:
                    src = dist.recv(got, tag=6)
                else:
                    work = dist.irecv(got, tag=6)
                    work.wait()
                    src = work._source_rank()
                assert_same(got, value(src * 100, 9, torch.float32), f"recv from any source, from {src}")
                senders.append(src)
            assert sorted(senders) == list(range(1, size)), senders
        else:
            dist.send(value(rank * 100, 9, torch.float32), dst=0, tag=6)
    dist.barrier()


def non_contiguous_body(rank, size):
    matrix = (torch.arange(12, dtype=torch.float32).view(3, 4) + rank).t()  # a transposed view
    assert not matrix.is_contiguous()
    dist.all_reduce(matrix)
    expected = sum((torch.arange(12, dtype=torch.float32).view(3, 4) + r).t() for r in range(size))
    assert torch.equal(matrix, expected)
    column = torch.zeros(4, 4)[:, 1]
    if rank == 0:
        column.copy_(torch.arange(4.0))
    dist.broadcast(column, src=0)
    assert torch.equal(column, torch.arange(4.0))


def against_gloo_body(rank, size):
    gloo = dist.new_group(backend="gloo")
    for dtype in [torch.float32, torch.float64, torch.int32, torch.int64]:
        for op in ["sum", "product", "min", "max"]:
            for count in COUNTS:
                ours, theirs = value(rank, count, dtype, op), value(rank, count, dtype, op)
                dist.all_reduce(ours, op=OPS[op])
                dist.all_reduce(theirs, op=OPS[op], group=gloo)
                assert torch.equal(ours, theirs), f"{op} {dtype} x{count} differs from gloo"
        outs, gloo_outs = [torch.zeros(9, dtype=dtype) for _ in range(size)], [torch.zeros(9, dtype=dtype)
                                                                               for _ in range(size)]
        mine = value(rank, 9, dtype)
        dist.all_gather(outs, mine)
        dist.all_gather(gloo_outs, mine, group=gloo)
        assert all(torch.equal(a, b) for a, b in zip(outs, gloo_outs))
    # Ended here, while its last call's tensors are still held: PyTorch 2.6's
    # gloo group joins its worker holding the GIL, and a worker that drops
    # the last reference to a tensor Python made waits for the GIL.
    dist.destroy_process_group(gloo)


def future_body(rank, size):
    tensor = torch.full((1000,), float(rank + 1))
    work = dist.all_reduce(tensor, async_op=True)
    chained = work.get_future().then(lambda fut: fut.value()[0] * 2)
    total = size * (size + 1) / 2
    assert torch.equal(chained.wait(), torch.full((1000,), 2 * total))
    assert work.is_completed()
    assert torch.equal(tensor, torch.full((1000,), total))
    # Many in flight, waited in reverse order.
    tensors = [torch.full((5000,), float(i + rank)) for i in range(8)]
    works = [dist.all_reduce(t, async_op=True) for t in tensors]
    for i in reversed(range(8)):
        works[i].wait()
        assert torch.equal(tensors[i], torch.full((5000,), float(size * i + total - size)))


def new_group_body(rank, size):
    evens = dist.new_group(ranks=[r for r in range(size) if r % 2 == 0], backend="loom")
    if rank % 2 == 0:
        tensor = torch.tensor([float(rank)])
        dist.all_reduce(tensor, group=evens)
        assert tensor.item() == sum(r for r in range(size) if r % 2 == 0)
    whole = torch.tensor([1.0])
    dist.all_reduce(whole)
    assert whole.item() == size


def premul_sum_body(rank, size):
    for dtype in [torch.float32, torch.float64, torch.bfloat16]:
        for count in COUNTS:
            tensor = value(rank, count, dtype)
            dist.all_reduce(tensor, op=dist._make_nccl_premul_sum(0.5))
            expected = (torch.stack([value(r, count, dtype) for r in range(size)]).to(torch.float64) * 0.5).sum(0)
            assert_same(tensor, expected.to(dtype), f"PREMUL_SUM all_reduce {dtype} x{count}")
            tensor = value(rank, count, dtype)
            dist.reduce(tensor, dst=0, op=dist._make_nccl_premul_sum(2.0))
            if rank == 0:
                expected = (torch.stack([value(r, count, dtype) for r in range(size)]).to(torch.float64) * 2).sum(0)
                assert_same(tensor, expected.to(dtype), f"PREMUL_SUM reduce {dtype} x{count}")


def refusals_body(rank, size):
    with pytest.raises(RuntimeError, match="all_reduce does not take tensors of dtype Short"):
        dist.all_reduce(torch.zeros(3, dtype=torch.int16))
    with pytest.raises(RuntimeError, match="does not take reduce op"):
        dist.all_reduce(torch.zeros(3, dtype=torch.int32), op=dist.ReduceOp.BAND)
    with pytest.raises(RuntimeError, match="cannot average bool tensors"):
        dist.all_reduce(torch.zeros(3, dtype=torch.bool), op=dist.ReduceOp.AVG)
    with pytest.raises(RuntimeError, match="tags are 0 or more"):
        dist.send(torch.zeros(1), dst=(rank + 1) % size, tag=-2)
    dist.barrier()


def coalesced_tensor_body(rank, size):
    # PyTorch 2.x's coalescing manager hands the backend every
    # all_gather_into_tensor (reduce_scatter_tensor) of the block at once.
    from torch.distributed.distributed_c10d import _coalescing_manager
    lengths = (1, 3, 5)
    inputs = [torch.full((n,), float(10 * rank + i)) for i, n in enumerate(lengths)]
    outputs = [torch.empty(n * size) for n in lengths]
    with _coalescing_manager(async_ops=True) as manager:
        for output, tensor in zip(outputs, inputs):
            dist.all_gather_into_tensor(output, tensor)
    manager.wait()
    for i, (n, output) in enumerate(zip(lengths, outputs)):
        assert torch.equal(output, torch.cat([torch.full((n,), float(10 * r + i)) for r in range(size)])), i
    inputs = [torch.arange(n * size, dtype=torch.float64) * (i + 1) + rank for i, n in enumerate(lengths)]
    outputs = [torch.empty(n, dtype=torch.float64) for n in lengths]
    with _coalescing_manager():
        for output, tensor in zip(outputs, inputs):
            dist.reduce_scatter_tensor(output, tensor)
    for i, (n, output) in enumerate(zip(lengths, outputs)):
        mine = torch.arange(rank * n, (rank + 1) * n, dtype=torch.float64)
        assert torch.equal(output, mine * (i + 1) * size + sum(range(size))), i


def sparse_all_reduce_body(rank, size):
    # Rank r holds r + 1 at rows 0..r (so the ranks overlap), with 0 to 2
    # dense dimensions; a rank with no nonzeros takes part too.
    def holding(r, dense):
        indices = torch.arange(r + 1).reshape(1, r + 1)
        values = torch.full([r + 1] + [2] * dense, float(r + 1))
        return torch.sparse_coo_tensor(indices, values, [size + 1] + [2] * dense)

    for dense in range(3):
        for dtype in (torch.float32, torch.float64, torch.int64):
            tensor = holding(rank, dense).to(dtype)
            expected = sum(holding(r, dense).to(dtype).to_dense() for r in range(size))
            dist.all_reduce(tensor)
            assert tensor.is_sparse
            assert torch.equal(tensor.to_dense(), expected), (dense, dtype)
    empty = torch.sparse_coo_tensor(torch.zeros(1, 0, dtype=torch.long), torch.zeros(0), [size + 1])
    expected = sum(holding(r, 0).to_dense() for r in range(1, size)) + empty.to_dense()
    tensor = empty if rank == 0 else holding(rank, 0)
    dist.all_reduce(tensor)
    assert torch.equal(tensor.to_dense(), expected)
    with pytest.raises(RuntimeError, match="sparse tensor takes SUM only"):
        dist.all_reduce(holding(rank, 0), op=dist.ReduceOp.MAX)
    dist.barrier()


def monitored_barrier_body(rank, size):
    # As gloo's: rank 0 names the first rank that stayed away (every one
    # with wait_all_ranks) within its timeout and tells the others, which
    # then say rank 0 failed them; they wait for rank 0 itself as long as
    # the group's timeout (12 s here).
    import datetime
    import loom_torch

    def seconds(n):
        return datetime.timedelta(seconds=n)

    first_away, both_away, no_time = (dist.new_group(list(range(size))) for _ in range(3))
    loom_torch.monitored_barrier(timeout=seconds(5))
    loom_torch.monitored_barrier(timeout=seconds(5), wait_all_ranks=True)
    loom_torch.monitored_barrier()  # the group's timeout
    if rank == 0:
        with pytest.raises(RuntimeError, match=r"\[Rank 0\]: Rank 2 failed to pass monitoredBarrier in 3000 ms"):
            loom_torch.monitored_barrier(first_away, timeout=seconds(3))
        # Rank 1 is still in first_away, or past it: it never calls both_away.
        with pytest.raises(RuntimeError, match=r"\[Rank 0\]: Ranks 1, 2 failed to pass monitoredBarrier in 1000 ms"):
            loom_torch.monitored_barrier(both_away, timeout=seconds(1), wait_all_ranks=True)
        with pytest.raises(RuntimeError, match="Rank 0 timed out in monitoredBarrier after 0 ms; not yet heard from: 1, 2"):
            loom_torch.monitored_barrier(no_time, timeout=seconds(0))
    elif rank == 1:
        # Rank 0's failure reaches it at once, not after the group's timeout.
        import time
        start = time.monotonic()
        with pytest.raises(RuntimeError, match="Rank 1 successfully reached monitoredBarrier, but received errors "
                                               "while waiting for send/recv from rank 0: .*replied that the barrier "
                                               "failed"):
            loom_torch.monitored_barrier(first_away, timeout=seconds(3))
        assert time.monotonic() - start < 11
    with pytest.raises(RuntimeError, match="tags from 1073741824 up carry monitored_barrier's messages"):
        dist.send(torch.zeros(1), dst=(rank + 1) % size, tag=2**30)
    # Every rank stays until rank 0 is done (a rank that exits fails the
    # others' waits at once), told through the store, which no failed
    # monitored_barrier can disturb.
    store = dist.distributed_c10d._get_default_store()
    if rank == 0:
        store.set("monitored_barrier_done", "1")
    else:
        store.wait(["monitored_barrier_done"])


def missing_rank_body(rank, size):
    # Rank 1 does not call in time: rank 0's wait with a timeout ends within
    # it, and the operation's own timeout (the group's, 3 s) names rank 1.
    # A group's timeout bounds its setup too: the ranks meet in the default
    # group, whose timeout a busy machine cannot outlast, then form the
    # group of 3 s.
    import datetime
    import time
    group = dist.new_group(timeout=datetime.timedelta(seconds=3))
    if rank == 1:
        time.sleep(5)
        return
    work = dist.all_reduce(torch.ones(4), group=group, async_op=True)
    with pytest.raises(RuntimeError, match="timeout in .*: not done after 500 ms"):
        work.wait(timeout=datetime.timedelta(milliseconds=500))
    with pytest.raises(RuntimeError, match=" timeout in all_reduce: .*rank 1"):
        work.wait()


# ---------------------------------------------------------------- tests

@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_all_reduce_every_dtype_and_op(size):
    ranks.run(size, all_reduce_body)


@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_broadcast_and_reduce_from_every_root(size):
    ranks.run(size, broadcast_reduce_body)


@pytest.mark.parametrize("size", [1, 2, 3, 4])
def test_gathers_and_scatters(size):
    ranks.run(size, gather_scatter_family_body)


@pytest.mark.parametrize("size", [2, 3, 4])
def test_all_to_all_even_uneven_and_lists(size):
    ranks.run(size, all_to_all_body)


@pytest.mark.parametrize("size", [2, 3])
def test_send_and_recv_around_the_ring(size):
    ranks.run(size, point_to_point_body)


def test_non_contiguous_tensors():
    ranks.run(2, non_contiguous_body)


@pytest.mark.parametrize("size", [2, 3])
def test_same_results_as_gloo(size):
    ranks.run(size, against_gloo_body)


def test_futures_and_many_in_flight():
    ranks.run(3, future_body)


def test_new_group():
    ranks.run(3, new_group_body)


@pytest.mark.parametrize("size", [1, 3])
def test_premul_sum(size):
    ranks.run(size, premul_sum_body)


def test_refusals_name_what_was_wrong():
    ranks.run(2, refusals_body)


@pytest.mark.skipif(int(torch.__version__.split(".")[0]) < 2, reason="PyTorch 1.x has no coalesced tensor collectives")
@pytest.mark.parametrize("size", [1, 3])
def test_coalesced_tensor_collectives(size):
    ranks.run(size, coalesced_tensor_body)


@pytest.mark.parametrize("size", [1, 3])
def test_sparse_all_reduce(size):
    ranks.run(size, sparse_all_reduce_body)


def test_monitored_barrier_names_the_missing_ranks():
    ranks.run(3, monitored_barrier_body, group_timeout=12)


def test_a_rank_that_never_arrives_is_named():
    ranks.run(2, missing_rank_body)


def test_env_init_as_torchrun_does():
    import socket
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    # USE_LIBUV=0: Debian's PyTorch 2.x is built without libuv, which its
    # TCPStore would use by default (1.13 ignores it).
    ranks.run(2, all_reduce_body, init_method="env://",
              env={"MASTER_ADDR": "127.0.0.1", "MASTER_PORT": str(port), "USE_LIBUV": "0"})
