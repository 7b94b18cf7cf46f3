"""Builds loom_torch against an installed Loom (pkg-config loom) or, when
LOOM_INCLUDE_DIRS and LOOM_LIBRARY_DIR are set, a build tree (CMake sets
them; tests/CMakeLists.txt).

    /usr/bin/python3 bindings/torch/setup.py build_py --build-lib DIR build_ext --build-lib DIR
"""
import os
import shlex
import subprocess

from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CppExtension

HERE = os.path.dirname(os.path.abspath(__file__))


def loom_paths():
    """(include dirs, library dir) of the Loom to link."""
    includes = os.environ.get("LOOM_INCLUDE_DIRS")
    library = os.environ.get("LOOM_LIBRARY_DIR")
    if includes and library:
        return includes.split(os.pathsep), library
    try:
        cflags = subprocess.run(["pkg-config", "--cflags-only-I", "loom"], check=True, capture_output=True,
                                text=True).stdout
        libs = subprocess.run(["pkg-config", "--libs-only-L", "loom"], check=True, capture_output=True,
                              text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        raise SystemExit(f"loom_torch: cannot find Loom: pkg-config loom failed ({e}); install Loom, set "
                         "PKG_CONFIG_PATH to its lib/pkgconfig, or set LOOM_INCLUDE_DIRS and LOOM_LIBRARY_DIR")
    includes = [f[2:] for f in shlex.split(cflags) if f.startswith("-I")]
    dirs = [f[2:] for f in shlex.split(libs) if f.startswith("-L")]
    return includes, dirs[0] if dirs else "/usr/lib"


includes, library = loom_paths()
sources = [os.path.join("csrc", name) for name in
           ("loom_torch.cc", "process_group_loom.cc", "sparse_allreduce.cc", "monitored_barrier.cc",
            "loom_work.cc", "tensor_types.cc")]

setup(
    name="loom_torch",
    version="0.1.0",
    description="Loom as a torch.distributed backend",
    packages=["loom_torch"],
    ext_modules=[CppExtension(
        "loom_torch._C", sources,
        include_dirs=includes,
        library_dirs=[library],
        runtime_library_dirs=[library],
        libraries=["loom"],
        extra_compile_args=["-O2", "-Wall"],
    )],
    cmdclass={"build_ext": BuildExtension},
)
