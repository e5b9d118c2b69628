"""Tessera for Python: tensors, every registry op, autograd, nn, optim and DLPack exchange.

    import tessera as ts
    x = ts.randn([3, 4], requires_grad=True)
    y = ts.softmax(x @ x.T, dim=1).sum()
    y.backward()
    print(x.grad)

Built on Tessera's C ABI (tessera._C): ops come from the runtime's registry at import time, so
plugin ops appear too (``tessera.ops.example.gemm_bias_act``). See docs/bindings.md.
"""
import builtins as _builtins
import contextlib as _contextlib
import functools as _functools

import numpy as _np

from . import _C
from ._C import (Tensor, dtype, device, TesseraError, InvalidArgumentError, OutOfRangeError, NotFoundError,
                 OutOfMemoryError, UnimplementedError, from_dlpack, manual_seed, is_grad_enabled, set_grad_enabled,
                 set_num_threads, get_num_threads, plugins, devices, memory_stats, empty_cache, save, load,
                 load_metadata, version, abi_version)
from . import _ops, _tensor

bool = _C.bool  # noqa: A001 (torch.bool's spelling)
uint8, int8, int16, int32, int64 = _C.uint8, _C.int8, _C.int16, _C.int32, _C.int64
float16, bfloat16, float32, float64 = _C.float16, _C.bfloat16, _C.float32, _C.float64
float8_e4m3fn, float8_e5m2, float8_e8m0fnu = _C.float8_e4m3fn, _C.float8_e5m2, _C.float8_e8m0fnu
float4_e2m1fn_x2 = _C.float4_e2m1fn_x2
half, float, double, long, short = float16, float32, float64, int64, int16  # noqa: A001
int = int32  # noqa: A001

# ---- ops: every registry op, as tessera.<name> and tessera.ops.<name> -----------------------------
ops, _core_ops, _methods = _ops.build()
_tensor.install(_core_ops, _methods)
for _name, _fn in _core_ops.items():
    if not _name.startswith("_") and _name not in globals():
        globals()[_name] = _fn


# ---- grad mode ------------------------------------------------------------------------------------

class _GradMode(_contextlib.ContextDecorator):
    def __init__(self, enabled):
        self.enabled = enabled

    def __enter__(self):
        self.prev = is_grad_enabled()
        set_grad_enabled(self.enabled)
        return self

    def __exit__(self, *exc):
        set_grad_enabled(self.prev)
        return False


def no_grad():
    """Context manager and decorator: nothing inside is recorded for autograd (torch.no_grad)."""
    return _GradMode(False)


def enable_grad():
    """Re-enables recording inside no_grad (torch.enable_grad)."""
    return _GradMode(True)


# ---- tensor creation ------------------------------------------------------------------------------

def _size(size):
    if len(size) == 1 and not isinstance(size[0], _builtins.int):
        return list(size[0])
    return list(size)


def _finish(t, requires_grad):
    if requires_grad:
        t.requires_grad_(True)
    return t


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor holding a copy of `data` (nested lists, scalars, NumPy arrays, tensors).
    Python floats become float32 and ints int64, as in PyTorch."""
    if isinstance(data, Tensor):
        t = data.detach()._to(device=device, dtype=dtype, copy=True)
    else:
        t = _C._as_tensor(data if isinstance(data, _np.ndarray) else _np.asarray(data))
        if not isinstance(data, _np.ndarray) and t.is_floating_point and t.dtype == float64:
            t = t._to(dtype=float32)
        if dtype is not None or device is not None:
            t = t._to(device=device, dtype=dtype)
        t = t.contiguous()
    return _finish(t, requires_grad)


def as_tensor(data, dtype=None, device=None):
    """Like tensor(), without a copy when data is already a tensor of that dtype and device."""
    if isinstance(data, Tensor):
        return data._to(device=device, dtype=dtype)
    return tensor(data, dtype=dtype, device=device)


def from_numpy(array):
    """A tensor sharing the NumPy array's memory (DLPack; the array stays alive as long as the
    tensor). The array must be writable and of a dtype Tessera has."""
    if not array.flags.writeable:
        raise ValueError("from_numpy: the array is read-only; Tessera tensors are writable (copy it first)")
    return from_dlpack(array)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    return _finish(_core_ops["full"](list(size), fill_value, dtype, device), requires_grad)


def zeros(*size, dtype=None, device=None, requires_grad=False):
    return full(_size(size), 0.0, dtype or float32, device, requires_grad)


def ones(*size, dtype=None, device=None, requires_grad=False):
    return full(_size(size), 1.0, dtype or float32, device, requires_grad)


def empty(*size, dtype=None, device=None, requires_grad=False):
    return zeros(*size, dtype=dtype, device=device, requires_grad=requires_grad)


def zeros_like(t, dtype=None, device=None, requires_grad=False):
    return full(t.shape, 0, dtype or t.dtype, device or t.device, requires_grad)


def ones_like(t, dtype=None, device=None, requires_grad=False):
    return full(t.shape, 1, dtype or t.dtype, device or t.device, requires_grad)


def full_like(t, fill_value, dtype=None, device=None, requires_grad=False):
    return full(t.shape, fill_value, dtype or t.dtype, device or t.device, requires_grad)


def randn(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_core_ops["randn"](_size(size), dtype, device), requires_grad)


def rand(*size, dtype=None, device=None, requires_grad=False):
    return _finish(_core_ops["rand"](_size(size), dtype, device), requires_grad)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    return _finish(_core_ops["arange"](start, end, step, dtype, device), requires_grad)


def linspace(start, end, steps, dtype=None, device=None):
    if steps == 1:
        return full([1], start, dtype or float32, device)
    step = (end - start) / (steps - 1)
    r = _core_ops["arange"](0, steps, 1, float64, device) * step + start
    return r._to(dtype=dtype or float32)


def eye(n, m=None, dtype=None, device=None):
    m = n if m is None else m
    return _core_ops["eq"](arange(n, device=device).unsqueeze(1), arange(m, device=device).unsqueeze(0)) \
        ._to(dtype=dtype or float32)


def cat(tensors, dim=0):
    return _core_ops["cat"](list(tensors), dim)


def stack(tensors, dim=0):
    return _core_ops["stack"](list(tensors), dim)


def split(t, size, dim=0):
    return t.split(size, dim)


def chunk(t, chunks, dim=0):
    return t.chunk(chunks, dim)


def unbind(t, dim=0):
    return t.unbind(dim)


def reshape(t, shape):
    return t.reshape(shape)


def transpose(t, dim0, dim1):
    return t.transpose(dim0, dim1)


def permute(t, dims):
    return t.permute(dims)


def squeeze(t, dim=None):
    return t.squeeze(dim)


def unsqueeze(t, dim):
    return t.unsqueeze(dim)


def is_tensor(obj):
    return isinstance(obj, Tensor)


def numel(t):
    return t.numel()


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return _builtins.bool(_core_ops["all"](_core_ops["isclose"](a, b, rtol, atol, equal_nan)).item())


def equal(a, b):
    return tuple(a.shape) == tuple(b.shape) and _builtins.bool(_core_ops["all"](_core_ops["eq"](a, b)).item())


from . import autograd, nn, optim  # noqa: E402  (they use the ops installed above)

__all__ = [n for n in globals() if not n.startswith("_")]
