"""Calls of compiled functions with torch tensors, made from C++.

A call whose inputs have the dtypes, shapes, strides and device of a call
checked before (a known call) is made by `launch.cpp`: outputs allocated
with PyTorch's allocator, the memref descriptors filled, the runtime told
the current stream, the entry called, with no Python in between. That is
what a launch-bound program (a decode step) pays per call. Anything else
returns None and the caller's checked Python path runs, then `remember`s the
call.

The C++ module is built on first use against the PyTorch at hand
(torch.utils.cpp_extension, a C++ compiler and Python's headers), once per
machine, PyTorch and Python, into Fusion's cache directory. Where it cannot
be built, calls go through the checked path every time (with one warning);
FUSION_CALLS=python asks for that path (to compare the two).
"""

import ctypes
import functools
import os
import re
import sys
import warnings

from . import tools

_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "launch.cpp")


@functools.lru_cache(maxsize=None)
def extension():
    """The `fusion_launch` module for this PyTorch, or None where calls go
    through Python (FUSION_CALLS=python, or it could not be built)."""
    if os.environ.get("FUSION_CALLS") == "python":
        return None
    try:
        import torch
        from torch.utils import cpp_extension

        tag = re.sub(r"[^A-Za-z0-9.]+", "_", f"torch{torch.__version__}-py{sys.version_info[0]}"
                                               f"{sys.version_info[1]}")
        directory = os.path.join(tools.cache_dir(), "launch", tag)
        os.makedirs(directory, exist_ok=True)
        return cpp_extension.load("fusion_launch", [_SOURCE], build_directory=directory,
                                  extra_cflags=["-O2"], verbose=False)
    except Exception as error:  # no compiler, no headers: still correct, slower
        warnings.warn(f"fusion: calls go through Python, the C++ call path could not be "
                      f"built ({type(error).__name__}: {error})")
        return None


def address(function):
    """The address of a ctypes function (0 for None)."""
    return ctypes.cast(function, ctypes.c_void_p).value if function is not None else 0


class KnownCalls:
    """The known calls of one compiled function: `entry` its ctypes entry,
    `set_stream` and `last_error` its runtime's (None on the CPU), `ranks`
    the rank of every argument (inputs, then outputs), `output_dtypes`
    torch dtypes. Falsy where calls are not made from C++."""

    def __init__(self, entry, set_stream, last_error, ranks, num_inputs, output_dtypes):
        module = extension()
        self._handle = None
        if module is not None:
            self._handle = module.function(address(entry), address(set_stream),
                                           address(last_error), tuple(ranks), num_inputs,
                                           tuple(output_dtypes))
        if self._handle is not None:
            # call(tensors, outputs): the outputs of a known call (written
            # into `outputs` when given, a tuple of tensors); None when the
            # call is not a known one; False when the runtime reported an
            # error (which the caller raises). A C partial: no Python frame.
            self.call = functools.partial(module.call, self._handle)
            self._remember = module.remember

    def __bool__(self):
        return self._handle is not None

    def remember(self, tensors, output_shapes, device):
        """A call the checked path made: `tensors` its inputs (a tuple),
        its outputs' shapes and device."""
        self._remember(self._handle, tuple(tensors), tuple(tuple(s) for s in output_shapes),
                       device)
