"""Makes the built loom_torch importable: LOOM_TORCH_BUILD names the
directory that holds the loom_torch package with its _C extension (CMake
sets it); without it, build/torch/lib of this checkout."""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD = os.environ.get("LOOM_TORCH_BUILD", os.path.join(HERE, "..", "..", "..", "build", "torch", "lib"))
if BUILD not in sys.path:
    sys.path.insert(0, os.path.abspath(BUILD))
if HERE not in sys.path:
    sys.path.insert(0, HERE)
