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

__all__ = ["BACKEND", "loom_version"]

BACKEND = "loom"


def loom_version():
    """Loom's version as loomGetVersion gives it (major * 10000 + minor * 100 + patch)."""
    return _C.loom_version()


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
