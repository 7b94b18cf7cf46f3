"""Loom as a torch.distributed backend.

    import loom_torch  # registers the backend "loom"
    torch.distributed.init_process_group("loom", ...)

Every init method works (env://, tcp://, file://, an explicit store): the
ranks meet through the store PyTorch gives the backend, so Loom binds no
port of PyTorch's. CPU tensors only, for now.
"""
import inspect

import torch
import torch.distributed as dist

from . import _C

__all__ = ["BACKEND", "loom_version", "monitored_barrier"]

BACKEND = "loom"


def loom_version():
    """Loom's version as loomGetVersion gives it (major * 10000 + minor * 100 + patch)."""
    return _C.loom_version()


def monitored_barrier(group=None, timeout=None, wait_all_ranks=False):
    """torch.distributed.monitored_barrier for "loom" groups, which torch's
    own refuses (it serves gloo alone). Same arguments, protocol and errors
    as gloo's: rank 0 names the first rank that did not arrive within
    `timeout` (every such rank with `wait_all_ranks`) and tells the ranks
    that arrived, which then say rank 0 failed them; they wait for rank 0
    itself as long as the group's timeout.
    `timeout` None: the group's own timeout. Point-to-point tags from 2**30
    up are its own."""
    from torch.distributed import distributed_c10d as c10d

    if c10d._rank_not_in_group(group):
        return None
    group_to_use = c10d._get_default_group() if group is None else group
    if timeout is None:
        return group_to_use.monitored_barrier(wait_all_ranks=wait_all_ranks)
    return group_to_use.monitored_barrier(timeout, wait_all_ranks=wait_all_ranks)


def _create_process_group(store, rank, size, timeout):
    return _C.create_process_group(store, rank, size, timeout)


def _register():
    if hasattr(dist.Backend, BACKEND.upper()):
        return  # registered already (the module was imported under another name)
    parameters = inspect.signature(dist.Backend.register_backend).parameters
    if "devices" in parameters:
        # PyTorch 2.x: say which devices the backend serves.
        dist.Backend.register_backend(BACKEND, _create_process_group, devices=["cpu"])
    else:
        dist.Backend.register_backend(BACKEND, _create_process_group)


_register()
