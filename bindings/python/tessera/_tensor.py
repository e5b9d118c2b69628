"""Python operators, indexing and conversions on tessera.Tensor, written over registry ops.

The C++ class (tessera._C.Tensor) holds metadata, views, autograd state and NumPy/DLPack
exchange; everything that computes is a registry op, so each operator below is one op call.
"""
import builtins
import numbers

import numpy as np

from . import _C

Tensor = _C.Tensor
# The registry's op functions, set by install(): indexing calls them without a lookup per call.
_OPS = {}
_DTYPE_NAMES = {"bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32", "float64",
                "float8_e4m3fn", "float8_e5m2", "float8_e8m0fnu", "float4_e2m1fn_x2",
                "float", "double", "half", "long", "int", "short"}


# ---- indexing (PyTorch's rules: basic indexing gives views, advanced indexing copies) ----------

def _is_index_array(i):
    return isinstance(i, (Tensor, list, np.ndarray)) and not isinstance(i, builtins.bool)


def _as_index(i):
    if isinstance(i, Tensor):
        return i
    return _C._as_tensor(np.asarray(i))


def _basic(x, idx):
    """Applies ints, slices, None and Ellipsis; returns (view, [(dim, index tensor)])."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    idx = tuple(_as_index(i) if _is_index_array(i) else i for i in idx)  # lists and arrays, once
    consumed = _dims_consumed(idx)
    if builtins.sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if consumed > x.ndim:
        raise IndexError(f"too many indices for tensor of dimension {x.ndim}")
    d = 0
    adv = []
    for i in idx:
        if i is Ellipsis:
            d += x.ndim - d - (consumed - _dims_consumed(idx[:_position(idx, Ellipsis)]))
            continue
        if i is None:
            x = x.unsqueeze(d)
            d += 1
        elif isinstance(i, builtins.bool):
            raise TypeError("indexing with a Python bool is not supported; use a bool tensor")
        elif isinstance(i, numbers.Integral) or (isinstance(i, Tensor) and i.ndim == 0 and not i.is_floating_point
                                                  and i.dtype != _C.bool):
            k, size = int(i), x.shape[d]
            if not -size <= k < size:
                raise IndexError(f"index {k} is out of bounds for dimension {d} with size {size}")
            x = x.select(d, k)
        elif isinstance(i, slice):
            size = x.shape[d]
            start, stop, step = i.indices(size) if (i.step is None or i.step > 0) else (0, 0, 0)
            if i.step is not None and i.step <= 0:
                raise ValueError("step must be greater than zero")
            x = x._slice(d, start, builtins.max(start, stop), step)
            d += 1
        elif _is_index_array(i):
            t = _as_index(i)
            adv.append((d, t))
            d += t.ndim if t.dtype in (_C.bool, _C.uint8) else 1
        else:
            raise TypeError(f"only integers, slices, None, Ellipsis and tensors are valid indices, not "
                            f"{type(i).__name__}")
    return x, adv


def _position(items, marker):
    """Index of `marker` by identity (== on a Tensor would be an op)."""
    return next(k for k, i in enumerate(items) if i is marker)


def _dims_consumed(items):
    """How many of the tensor's dims the index items use (None and ... use none; a bool or
    uint8 mask uses its rank; anything else one)."""
    n = 0
    for i in items:
        if i is None or i is Ellipsis:
            continue
        if _is_index_array(i):
            t = _as_index(i)
            n += t.ndim if t.dtype in (_C.bool, _C.uint8) else 1
        else:
            n += 1
    return n


def _advanced_layout(x, adv):
    """(permuted view with the indexed dims first, index tensors, final permutation or None)."""
    spans = []
    for d, t in adv:
        n = t.ndim if t.dtype in (_C.bool, _C.uint8) else 1
        spans.append(list(range(d, d + n)))
    front = [d for s in spans for d in s]
    rest = [d for d in range(x.ndim) if d not in front]
    y = x.permute(front + rest) if front != list(range(len(front))) else x
    adjacent = front == list(range(front[0], front[0] + len(front)))
    return y, [t for _, t in adv], (front[0] if adjacent else 0), len(rest)


def _move_front(r, nrest, p):
    """r has the broadcast index dims first: move them to position p (PyTorch's layout)."""
    if p == 0:
        return r
    nb = r.ndim - nrest
    perm = list(range(nb, nb + p)) + list(range(nb)) + list(range(nb + p, r.ndim))
    return r.permute(perm)


def _getitem(self, idx):
    x, adv = _basic(self, idx)
    if not adv:
        return x
    y, tensors, p, nrest = _advanced_layout(x, adv)
    return _move_front(_OPS["index"](y, tensors), nrest, p)


def _setitem(self, idx, value):
    x, adv = _basic(self, idx)
    if not adv:
        x.copy_(value)
        return
    y, tensors, p, nrest = _advanced_layout(x, adv)
    v = value if isinstance(value, Tensor) else _C._as_tensor(value)
    v = v._to(dtype=self.dtype, device=self.device)
    if v.ndim > 0 and p > 0:
        # The value is laid out as the result of x[idx]; index_put_ wants the index dims first.
        shape = _move_front(_OPS["index"](y, tensors), nrest, p).shape
        v = v.expand(shape)
        nb = len(shape) - nrest
        inverse = list(range(p, p + nb)) + list(range(p)) + list(range(p + nb, len(shape)))
        v = v.permute(inverse)
    _OPS["index_put_"](y, tensors, v)


# ---- conversions ----------------------------------------------------------------------------------

def _to(self, *args, **kwargs):
    """to(device), to(dtype), to(device, dtype), to(other), with dtype=/device=/copy= keywords."""
    device = kwargs.pop("device", None)
    dtype = kwargs.pop("dtype", None)
    copy = kwargs.pop("copy", False)
    kwargs.pop("non_blocking", None)
    if kwargs:
        raise TypeError(f"to() got unexpected keyword arguments {sorted(kwargs)}")
    for a in args:
        if isinstance(a, Tensor):
            device, dtype = a.device, a.dtype
        elif isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, str) and a.split(".")[-1] in _DTYPE_NAMES:
            dtype = a
        else:
            device = a
    return self._to(device=device, dtype=dtype, copy=copy)


def _repr(self):
    t = self.detach()
    if t.dtype == _C.bfloat16:
        t = t._to(dtype=_C.float32)
    body = np.array2string(t.numpy(), separator=", ", prefix="tensor(", threshold=200, edgeitems=3)
    extras = []
    if self.dtype not in (_C.float32, _C.int64, _C.bool):
        extras.append(f"dtype={self.dtype!r}")
    if str(self.device) != "cpu:0":
        extras.append(f"device='{self.device}'")
    if self.grad_fn_name:
        extras.append(f"grad_fn=<{self.grad_fn_name}>")
    elif self.requires_grad:
        extras.append("requires_grad=True")
    return "tensor(" + body + "".join(", " + e for e in extras) + ")"


def _item_check(self, what):
    if self.numel() != 1:
        raise ValueError(f"{what} of a tensor with {self.numel()} elements is ambiguous")
    return self.item()


def install(core, methods):
    """Adds operators, indexing, conversions and one method per op taking `self` first."""
    T = Tensor
    op = core.__getitem__
    _OPS.update(core)

    def binary(name, reflected=False):
        fn = op(name)
        if reflected:
            return lambda a, b: fn(_C._as_tensor(b) if not isinstance(b, Tensor) else b, a)
        return lambda a, b: fn(a, b)

    T.__add__ = binary("add")
    T.__radd__ = binary("add", True)
    T.__sub__ = binary("sub")
    T.__rsub__ = lambda a, b: op("sub")(_wrap(b), a)
    T.__mul__ = binary("mul")
    T.__rmul__ = binary("mul", True)
    T.__truediv__ = binary("div")
    T.__rtruediv__ = lambda a, b: op("div")(_wrap(b), a)
    T.__floordiv__ = lambda a, b: op("div_mode")(a, b, "floor")
    T.__rfloordiv__ = lambda a, b: op("div_mode")(_wrap(b), a, "floor")
    T.__mod__ = binary("remainder")
    T.__rmod__ = lambda a, b: op("remainder")(_wrap(b), a)
    T.__pow__ = lambda a, b: op("pow")(a, b)
    T.__rpow__ = lambda a, b: op("pow")(_wrap(b), a)
    T.__matmul__ = binary("matmul")
    T.__rmatmul__ = lambda a, b: op("matmul")(_C._as_tensor(b), a)
    T.__neg__ = lambda a: op("neg")(a)
    T.__pos__ = lambda a: a
    T.__abs__ = lambda a: op("abs")(a)
    T.__invert__ = lambda a: op("logical_not")(a) if a.dtype == _C.bool else op("bitwise_not")(a)
    T.__and__ = binary("bitwise_and")
    T.__rand__ = binary("bitwise_and", True)
    T.__or__ = binary("bitwise_or")
    T.__ror__ = binary("bitwise_or", True)
    T.__xor__ = binary("bitwise_xor")
    T.__rxor__ = binary("bitwise_xor", True)
    T.__lshift__ = binary("bitwise_left_shift")
    T.__rshift__ = binary("bitwise_right_shift")
    for name, opname in (("__eq__", "eq"), ("__ne__", "ne"), ("__lt__", "lt"), ("__le__", "le"),
                         ("__gt__", "gt"), ("__ge__", "ge")):
        setattr(T, name, binary(opname))
    T.__hash__ = object.__hash__
    for name, opname in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                         ("__itruediv__", "div_"), ("__ipow__", "pow_"), ("__imod__", "remainder_"),
                         ("__iand__", "bitwise_and_"), ("__ior__", "bitwise_or_"), ("__ixor__", "bitwise_xor_")):
        setattr(T, name, (lambda f: lambda a, b: f(a, b))(op(opname)))
    T.__getitem__ = _getitem
    T.__setitem__ = _setitem
    T.__iter__ = lambda a: (a.select(0, i) for i in range(len(a)))
    T.__bool__ = lambda a: builtins.bool(_item_check(a, "the truth value"))
    T.__float__ = lambda a: float(_item_check(a, "float()"))
    T.__int__ = lambda a: int(_item_check(a, "int()"))
    T.__index__ = lambda a: (int(_item_check(a, "index")) if not a.is_floating_point and a.dtype != _C.bool
                             else (_ for _ in ()).throw(TypeError("only integer tensors can be used as an index")))
    T.__array__ = lambda a, dtype=None: a.detach().numpy() if dtype is None else a.detach().numpy().astype(dtype)
    T.__array_priority__ = 1000
    T.__repr__ = _repr
    T.__str__ = _repr
    T.to = _to
    T.cpu = lambda a: a._to(device="cpu:0")
    T.cuda = lambda a, index=0: a._to(device=f"cuda:{index}")
    for name, dt in (("float", _C.float32), ("double", _C.float64), ("half", _C.float16),
                     ("bfloat16", _C.bfloat16), ("long", _C.int64), ("int", _C.int32), ("short", _C.int16),
                     ("bool", _C.bool), ("byte", _C.uint8), ("char", _C.int8)):
        setattr(T, name, (lambda d: lambda a: a._to(dtype=d))(dt))
    T.type_as = lambda a, b: a._to(dtype=b.dtype)
    T.new_zeros = lambda a, size, dtype=None: op("full")(list(size), 0, dtype or a.dtype, a.device)
    T.new_ones = lambda a, size, dtype=None: op("full")(list(size), 1, dtype or a.dtype, a.device)
    T.new_full = lambda a, size, value, dtype=None: op("full")(list(size), value, dtype or a.dtype, a.device)
    T.chunk = lambda a, chunks, dim=0: _chunk(a, chunks, dim)
    T.split = lambda a, size, dim=0: _split(a, size, dim)
    T.unbind = lambda a, dim=0: tuple(a.select(dim, i) for i in range(a.shape[dim]))
    T.flatten = lambda a, start_dim=0, end_dim=-1: op("flatten")(a, start_dim, end_dim)
    T.zero_ = lambda a: a.fill_(0)
    for name, fn in methods:
        if not hasattr(T, name):
            setattr(T, name, fn)


def _wrap(b):
    return b if isinstance(b, Tensor) else _C._as_tensor(b)


def _split(a, size, dim):
    n = a.shape[dim]
    if isinstance(size, numbers.Integral):
        sizes = [builtins.min(size, n - s) for s in range(0, n, size)] or [0]
    else:
        sizes = list(size)
        if builtins.sum(sizes) != n:
            raise ValueError(f"split sizes {sizes} do not sum to dimension {dim} of size {n}")
    out, start = [], 0
    for s in sizes:
        out.append(a.narrow(dim, start, s))
        start += s
    return tuple(out)


def _chunk(a, chunks, dim):
    n = a.shape[dim]
    size = -(-n // chunks) if n else 0
    return _split(a, size, dim) if size else (a,)
