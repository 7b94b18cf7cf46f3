"""Runs a test body on N ranks as processes (spawned, as torchrun's are),
each in a "loom" process group, and fails naming every rank that raised.

A body is a module-level function body(rank, size, *args); it may make
more groups. The parent waits at most `timeout` seconds, then kills the
ranks and fails: a hang is a failure with a name, never a stuck suite."""
import datetime
import multiprocessing
import os
import tempfile
import traceback

import torch.distributed as dist

import conftest  # noqa: F401  (the build's loom_torch on sys.path)


def _rank_main(rank, size, init_method, env, body, args, errors, group_timeout):
    os.environ.update(env)
    try:
        import loom_torch  # noqa: F401  (registers "loom")
        extra = {"timeout": datetime.timedelta(seconds=group_timeout)} if group_timeout else {}
        dist.init_process_group("loom", init_method=init_method, rank=rank, world_size=size, **extra)
        body(rank, size, *args)
        dist.destroy_process_group()
    except BaseException:  # noqa: B902  (every failure goes to the parent)
        errors.put((rank, traceback.format_exc()))
        raise SystemExit(1)


def run(size, body, *args, timeout=180, env=None, init_method=None, group_timeout=None):
    context = multiprocessing.get_context("spawn")
    errors = context.Queue()
    with tempfile.TemporaryDirectory() as tmp:
        init = init_method or "file://" + os.path.join(tmp, "store")
        procs = [context.Process(target=_rank_main, args=(r, size, init, dict(env or {}), body, args, errors,
                                                                 group_timeout))
                 for r in range(size)]
        for p in procs:
            p.start()
        for p in procs:
            p.join(timeout)
        hung = [r for r, p in enumerate(procs) if p.is_alive()]
        for p in procs:
            if p.is_alive():
                p.kill()
                p.join()
        failures = []
        while not errors.empty():
            failures.append(errors.get())
        if hung:
            failures.append((hung, f"still running after {timeout} s: killed"))
        bad_exit = [r for r, p in enumerate(procs) if p.exitcode not in (0, None) and r not in [f[0] for f in failures]]
        for r in bad_exit:
            failures.append((r, f"exited with code {procs[r].exitcode}"))
        if failures:
            raise AssertionError("\n".join(f"rank {r}:\n{text}" for r, text in sorted(failures, key=str)))
