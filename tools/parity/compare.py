#!/usr/bin/python3
"""The PyTorch half of the parity suite (docs/parity.md).

    /usr/bin/python3 tools/parity/compare.py DUMP_PREFIX [--deviations FILE] [--op NAME]... [-v]
    /usr/bin/python3 tools/parity/compare.py DUMP_PREFIX --self-test

Reads DUMP_PREFIX.json and DUMP_PREFIX.safetensors written by tessera-parity-dump (every
conformance OpInfo sample, and the parity-only ones of extras.cpp, run by Tessera on cpu:0:
inputs, outputs, cotangents, gradients),
replays each case in PyTorch through the table MAPPINGS below and compares:
  - shapes and dtypes always;
  - integer and bool values exactly; floating values within a dtype's tolerance (times the
    OpInfo's tol_scale), NaN where NaN, equal infinities, and (forward) the sign of zeros;
  - gradients: torch.autograd.grad of the same outputs with the same cotangents.
Random ops (deterministic=false in the OpInfo) are compared for shape and dtype only.
A case whose op has no mapping is counted as 'not mapped'; a case listed in the deviations
file (tools/parity/deviations.json) is skipped with its reason printed (it is still run, so
that an entry whose cases agree now is flagged as possibly stale). Exit status: 0 when
every compared case agrees, 1 on a mismatch (one line per case says what differs), 77 when
torch cannot be imported (ctest reports the test as skipped), 2 for usage errors.
--self-test replaces a few mappings with deliberately wrong ones and checks that every one is
caught (and that the element comparison tells apart what it must): 0 when all are.
"""

import fnmatch
import json
import math
import os
import struct
import sys
import time
import warnings

SKIP = 77
try:
    import torch
    import torch.nn.functional as F
except Exception as e:  # noqa: BLE001 - any import failure means "no PyTorch here"
    print(f"parity: skipped: {sys.executable} cannot import torch ({e}); "
          "install Debian's python3-torch (tools/setup-deps.sh does)")
    sys.exit(SKIP)

HERE = os.path.dirname(os.path.abspath(__file__))

# ---- safetensors without the safetensors package --------------------------------------------
# 8-byte little-endian header length, a JSON header {name: {dtype, shape, data_offsets}}, then
# the raw little-endian bytes.
ST_DTYPES = {
    "BOOL": torch.bool, "U8": torch.uint8, "I8": torch.int8, "I16": torch.int16, "I32": torch.int32,
    "I64": torch.int64, "F16": torch.float16, "BF16": torch.bfloat16, "F32": torch.float32,
    "F64": torch.float64,
}


def read_safetensors(path):
    with open(path, "rb") as f:
        blob = f.read()
    (n,) = struct.unpack("<Q", blob[:8])
    header = json.loads(blob[8:8 + n])
    base = 8 + n
    out = {}
    for name, e in header.items():
        if name == "__metadata__":
            continue
        dt = ST_DTYPES[e["dtype"]]
        lo, hi = e["data_offsets"]
        shape = e["shape"]
        if hi == lo:
            out[name] = torch.empty(shape, dtype=dt)
        else:
            buf = bytearray(blob[base + lo:base + hi])  # writable: torch.frombuffer warns otherwise
            out[name] = torch.frombuffer(buf, dtype=dt).reshape(shape)
    return out


# ---- Tessera dtype names -> torch -----------------------------------------------------------
DTYPES = {
    "bool": torch.bool, "uint8": torch.uint8, "int8": torch.int8, "int16": torch.int16, "int32": torch.int32,
    "int64": torch.int64, "float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32,
    "float64": torch.float64,
}

# (rtol, atol) before the OpInfo's tol_scale. Looser than the conformance suite's (which compares
# Tessera with itself in float64): two libraries' libm, BLAS and summation orders differ.
FORWARD_TOL = {torch.float64: (1e-7, 1e-9), torch.float32: (2e-5, 2e-6)}
GRAD_TOL = {torch.float64: (1e-6, 1e-8), torch.float32: (2e-4, 2e-5)}


# ---- the mapping table ------------------------------------------------------------------------
# MAPPINGS[(op, variant)] = fn(x, c) -> result or tuple of results, where x is the list of the
# case's input tensors (None for undefined ones) and c the case record: c["sample"] is the sample's
# index within its OpInfo, c["desc"] its description, c["dtype"] the dtype it ran in. The
# arguments each lambda passes are the ones the OpInfo's sample passes (tools/conformance/
# opinfo_*.cpp); change both together. variant counts OpInfos sharing one name (sort, norm).
MAPPINGS = {}


def op(name, variant=0):
    def deco(fn):
        MAPPINGS[(name, variant)] = fn
        return fn
    return deco


def simple(name, fn, variant=0):
    MAPPINGS[(name, variant)] = fn


def dims_or_all(d):
    return None if not d else d


# -- unary (opinfo_unary.cpp: the extra arguments are fixed per op; `alt` on odd samples)
for n in ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "reciprocal", "sin", "cos",
          "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "erf", "erfc", "erfinv",
          "sigmoid", "logit", "frac", "neg", "abs", "square", "sign", "sgn", "floor", "ceil", "trunc", "nan_to_num",
          "positive", "isnan", "isinf", "isposinf", "isneginf", "isfinite", "signbit", "relu"]:
    simple(n, (lambda f: lambda x, c: f(x[0]))(getattr(torch, n)))
simple("silu", lambda x, c: F.silu(x[0]))
simple("mish", lambda x, c: F.mish(x[0]))
simple("selu", lambda x, c: F.selu(x[0]))
simple("hardswish", lambda x, c: F.hardswish(x[0]))
simple("hardsigmoid", lambda x, c: F.hardsigmoid(x[0]))
simple("relu6", lambda x, c: F.relu6(x[0]))
simple("gelu", lambda x, c: F.gelu(x[0], approximate="tanh" if c["sample"] % 2 else "none"))
simple("leaky_relu", lambda x, c: F.leaky_relu(x[0], 0.2))
simple("elu", lambda x, c: torch.ops.aten.elu(x[0], 1.5, 0.5, 2.0))
simple("celu", lambda x, c: F.celu(x[0], 0.7))
simple("softplus", lambda x, c: F.softplus(x[0], 2.0, 3.0))
simple("hardtanh", lambda x, c: F.hardtanh(x[0], -2.0, 2.5))
simple("round", lambda x, c: torch.round(x[0], decimals=2)
       if c["sample"] % 2 and x[0].is_floating_point() else torch.round(x[0]))

# -- binary (opinfo_binary.cpp)
simple("add", lambda x, c: torch.add(x[0], x[1], alpha=2))
for n in ["sub", "mul", "div", "maximum", "minimum", "pow", "eq", "ne", "lt", "le", "gt", "ge", "remainder", "fmod",
          "atan2", "hypot", "copysign", "xlogy", "logaddexp", "logaddexp2", "fmax", "fmin", "true_divide",
          "float_power", "logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or", "bitwise_xor"]:
    simple(n, (lambda f: lambda x, c: f(x[0], x[1]))(getattr(torch, n)))
# torch 1.13 has no derivative for floor_divide; div(rounding_mode="floor") is the same function
# with one (zero almost everywhere), so gradient cases go through it.
simple("floor_divide", lambda x, c: torch.div(x[0], x[1], rounding_mode="floor") if x[0].requires_grad
       else torch.floor_divide(x[0], x[1]))


def shift(left):
    """torch's shift where the count is below the bit width. A count >= the width is C undefined
    behaviour in PyTorch 1.13's kernel (x86 takes the count mod 32, so int8 1 << 62 gives 64);
    there the defined result is used, as PyTorch >= 2.1 defines it and Tessera computes it: 0 for
    a left shift, the sign fill (0 or -1) for a right one."""
    def run(x, c):
        a, n = x[0], x[1]
        bits = torch.iinfo(a.dtype).bits
        in_range = (n >= 0) & (n < bits)
        safe = torch.where(in_range, n, torch.zeros_like(n))
        r = torch.bitwise_left_shift(a, safe) if left else torch.bitwise_right_shift(a, safe)
        over = torch.zeros_like(a) if left else torch.where(a < 0, torch.full_like(a, -1), torch.zeros_like(a))
        return torch.where(in_range, r, over)
    return run


simple("bitwise_left_shift", shift(True))
simple("bitwise_right_shift", shift(False))
simple("div_mode", lambda x, c: torch.div(x[0], x[1], rounding_mode="floor"))
simple("isclose", lambda x, c: torch.isclose(x[0], x[1], 0.5, 0.1))
simple("where", lambda x, c: torch.where(x[2] > 0, x[0], x[1]))
simple("lerp", lambda x, c: torch.lerp(x[0], x[1], x[2]))
simple("addcmul", lambda x, c: torch.addcmul(x[0], x[1], x[2], value=0.5))
simple("addcdiv", lambda x, c: torch.addcdiv(x[0], x[1], x[2], value=-1.5))
simple("clamp_tensor", lambda x, c: torch.clamp(x[0], x[1], x[2]))
simple("clamp", lambda x, c: torch.clamp(x[0], -0.5, 0.75))
simple("clamp_min", lambda x, c: torch.clamp_min(x[0], 0.25))
simple("clamp_max", lambda x, c: torch.clamp_max(x[0], 0.25))
simple("lerp_scalar", lambda x, c: torch.lerp(x[0], x[1], 0.3))


# -- factories (opinfo_factory.cpp): the arguments are in the description
def parse_shape(text):
    inner = text.strip()[1:-1].strip()
    return [int(v) for v in inner.split(",")] if inner else []


@op("full")
def _full(x, c):
    shape, value = c["desc"].split(" value ")
    return torch.full(parse_shape(shape), float(value), dtype=DTYPES[c["dtype"]])


@op("arange")
def _arange(x, c):
    start, end, step = (float(v) for v in c["desc"].strip("()").split(","))
    if all(v == int(v) for v in (start, end, step)):
        start, end, step = int(start), int(end), int(step)
    return torch.arange(start, end, step, dtype=DTYPES[c["dtype"]])


@op("_copy")
def _copy(x, c):
    d = c["desc"]
    if d.endswith("and back"):
        return x[0].clone(), x[0].clone()
    if d.endswith("functional _copy"):
        return x[0].clone()
    return x[0].to(DTYPES[d.rsplit(" to ", 1)[1]])


simple("rand", lambda x, c: torch.rand(parse_shape(c["desc"]), dtype=DTYPES[c["dtype"]]))
simple("randn", lambda x, c: torch.randn(parse_shape(c["desc"]), dtype=DTYPES[c["dtype"]]))

# -- index (opinfo_index.cpp)
simple("index_select", lambda x, c: torch.index_select(x[0], 1 if c["sample"] in (0, 2) else 0, x[1]))
simple("gather", lambda x, c: torch.gather(x[0], 0 if c["sample"] == 1 else 1, x[1]))


def src_part(src, index):
    """The part of src that scatter reads (index's extent). Same forward; and PyTorch 1.13's
    scatter/scatter_add backward returns an index-shaped gradient for a larger src and then
    refuses it (a torch defect), while the gradient through this slice is src-shaped."""
    return src[tuple(slice(0, n) for n in index.shape)]


simple("scatter", lambda x, c: torch.scatter(x[0], 1 if c["sample"] == 0 else 0, x[1], src_part(x[2], x[1])))
simple("scatter_value", lambda x, c: torch.scatter(x[0], 1, x[1], 2.0))
simple("scatter_add", lambda x, c: torch.scatter_add(x[0], 1 if c["sample"] == 0 else 0, x[1], src_part(x[2], x[1])))
simple("scatter_reduce", lambda x, c: torch.scatter_reduce(
    x[0], 1, x[1], x[2], ["sum", "mean", "amax", "amin"][c["sample"] // 2], include_self=c["sample"] % 2 == 0))
simple("index_add", lambda x, c: torch.index_add(x[0], 0, x[1], x[2], alpha=2.0 if c["sample"] == 0 else 1.0))
simple("index_copy", lambda x, c: torch.index_copy(x[0], 1, x[1], x[2]))
simple("index_fill", lambda x, c: torch.index_fill(x[0], 1, x[1], -2.0))
simple("masked_fill", lambda x, c: torch.masked_fill(x[0], x[1], -3.0))
simple("masked_fill_tensor", lambda x, c: torch.masked_fill(x[0], x[1], x[2]))
simple("masked_select", lambda x, c: torch.masked_select(x[0], x[1]))
simple("masked_scatter", lambda x, c: torch.masked_scatter(x[0], x[1], x[2]))
simple("nonzero", lambda x, c: torch.nonzero(x[0]))
simple("argwhere", lambda x, c: torch.argwhere(x[0]))
simple("take", lambda x, c: torch.take(x[0], x[1]))
simple("put", lambda x, c: torch.put(x[0], x[1], x[2], accumulate=True))


@op("index")
def _index(x, c):
    if c["sample"] == 0:
        return x[0][x[1], x[2]]
    if c["sample"] == 1:
        return x[0][:, x[1]]
    return x[0][x[1]]


@op("index_put")
def _index_put(x, c):
    if c["sample"] == 0:
        return torch.index_put(x[0], (x[1],), x[2], accumulate=True)
    return torch.index_put(x[0], (x[1], x[2]), x[3], accumulate=False)


# -- linalg (opinfo_linalg.cpp)
for n in ["mm", "bmm", "matmul", "mv", "dot", "vdot", "outer", "inverse", "det"]:
    simple(n, (lambda f: lambda x, c: f(*x))(getattr(torch, n)))
simple("addmm", lambda x, c: torch.addmm(x[0], x[1], x[2], beta=0.5, alpha=2.0) if c["sample"] == 0
       else torch.addmm(x[0], x[1], x[2]))
simple("addmv", lambda x, c: torch.addmv(x[0], x[1], x[2], beta=2.0, alpha=-1.0))
simple("baddbmm", lambda x, c: torch.baddbmm(x[0], x[1], x[2], beta=0.25, alpha=3.0))
simple("addbmm", lambda x, c: torch.addbmm(x[0], x[1], x[2]))
simple("linear", lambda x, c: F.linear(*x))
simple("tensordot", lambda x, c: torch.tensordot(x[0], x[1], ([1, 2], [1, 0])))
EINSUM = ["ij,jk->ik", "ii->i", "ii", "i,j->ij", "bhqd,bhkd->bhqk", "...ij,...jk->...ik"]
simple("einsum", lambda x, c: torch.einsum(EINSUM[c["sample"]], *x))
simple("linalg_solve", lambda x, c: torch.linalg.solve(x[0], x[1]))
simple("slogdet", lambda x, c: tuple(torch.linalg.slogdet(x[0])))


@op("cholesky")
def _cholesky(x, c):
    a = x[0]
    s = (a + a.transpose(-2, -1)) * 0.5
    return torch.linalg.cholesky(s, upper=c["sample"] == 1)


# -- nn (opinfo_nn.cpp)
SOFTMAX_DIMS = [1, 1, 0, 1, -1]
simple("softmax", lambda x, c: torch.softmax(x[0], SOFTMAX_DIMS[c["sample"]]))
simple("log_softmax", lambda x, c: torch.log_softmax(x[0], SOFTMAX_DIMS[c["sample"]]))
REDUCTIONS = ["none", "mean", "sum"]
simple("mse_loss", lambda x, c: F.mse_loss(x[0], x[1], reduction=REDUCTIONS[c["sample"]]))
simple("l1_loss", lambda x, c: F.l1_loss(x[0], x[1], reduction=REDUCTIONS[c["sample"]]))
simple("smooth_l1_loss", lambda x, c: F.smooth_l1_loss(x[0], x[1], reduction=REDUCTIONS[c["sample"]], beta=0.5))
simple("huber_loss", lambda x, c: F.huber_loss(x[0], x[1], reduction=REDUCTIONS[c["sample"]], delta=0.5))
# 'mean' averages over every element, as Tessera's does (torch warns that batchmean is the true KL).
simple("kl_div", lambda x, c: F.kl_div(x[0], x[1], reduction=REDUCTIONS[c["sample"]]))


# Tessera differentiates the binary cross entropies with respect to weight (and pos_weight) too;
# torch refuses requires_grad there, so gradient cases use the defining formulas (torch's docs).
@op("binary_cross_entropy")
def _bce(x, c):
    p, t, w = x
    if not w.requires_grad:
        return F.binary_cross_entropy(p, t, w)
    return (-w * (t * p.log().clamp_min(-100) + (1 - t) * (1 - p).log().clamp_min(-100))).mean()


@op("binary_cross_entropy_with_logits")
def _bce_logits(x, c):
    z, t, w, pw = x
    if not (w.requires_grad or pw.requires_grad):
        return F.binary_cross_entropy_with_logits(z, t, w, pos_weight=pw, reduction="sum")
    log_sig, log_one_minus = F.logsigmoid(z), F.logsigmoid(-z)
    return (-w * (pw * t * log_sig + (1 - t) * log_one_minus)).sum()


@op("nll_loss")
def _nll(x, c):
    if c["sample"] == 0:
        return F.nll_loss(x[0], x[1], x[2], ignore_index=2, reduction="mean")
    return F.nll_loss(x[0], x[1], reduction="none")


@op("cross_entropy")
def _ce(x, c):
    if c["sample"] == 0:
        return F.cross_entropy(x[0], x[1], x[2], ignore_index=2, reduction="mean")
    return F.cross_entropy(x[0], x[1], reduction="none")


simple("layer_norm", lambda x, c: F.layer_norm(x[0], [7], x[1], x[2]) if c["sample"] == 0
       else F.layer_norm(x[0], [3, 4]))


@op("rms_norm")
def _rms(x, c):  # no torch.rms_norm in 1.13: the definition (torch 2.4's F.rms_norm)
    return x[0] * torch.rsqrt(x[0].pow(2).mean(-1, keepdim=True) + 1e-6) * x[1]


simple("group_norm", lambda x, c: F.group_norm(x[0], 3, x[1], x[2]))
simple("batch_norm", lambda x, c: F.batch_norm(x[0], None, None, x[1], x[2], training=True))
simple("conv2d", lambda x, c: F.conv2d(x[0], x[1], x[2], 1, 1) if c["sample"] == 0
       else F.conv2d(x[0], x[1], None, [2, 1], [0, 1], [1, 2], 2))
simple("conv1d", lambda x, c: F.conv1d(x[0], x[1], None, 2, 1, 1, 2))
simple("conv_transpose2d", lambda x, c: F.conv_transpose2d(x[0], x[1], x[2], [2, 1], [1, 0], [1, 0], 2))
simple("max_pool2d", lambda x, c: F.max_pool2d(x[0], 3, 2, 1, 1, ceil_mode=True))
simple("avg_pool2d", lambda x, c: F.avg_pool2d(x[0], 3, 2, 1, ceil_mode=True, count_include_pad=False))
simple("adaptive_avg_pool2d", lambda x, c: F.adaptive_avg_pool2d(x[0], [3, 2]))
simple("upsample_bilinear2d", lambda x, c: F.interpolate(x[0], size=[5, 7], mode="bilinear", align_corners=False))
simple("upsample_nearest2d", lambda x, c: F.interpolate(x[0], size=[6, 3], mode="nearest"))
simple("embedding", lambda x, c: F.embedding(x[1], x[0], padding_idx=1))
simple("one_hot", lambda x, c: F.one_hot(x[0], 4))
simple("dropout", lambda x, c: F.dropout(x[0], 0.3, True))


@op("scaled_dot_product_attention")
def _sdpa(x, c):  # no F.scaled_dot_product_attention in 1.13: its definition (torch 2.0 docs)
    q, k, v = x[0], x[1], x[2]
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.shape[-1])
    if c["sample"] == 0:
        keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        scores = scores.masked_fill(~keep, float("-inf"))
    else:
        scores = scores + x[3]
    return torch.softmax(scores, -1) @ v


@op("sgd_step_")
def _sgd(x, c):  # torch.optim.SGD's update with an existing momentum buffer
    p, g, buf = x[0].clone(), x[1], x[2].clone()
    g = g + 0.01 * p
    buf = buf * 0.9 + g
    return p - 0.1 * buf, buf


@op("adam_step_")
def _adamw(x, c):  # torch.optim.AdamW's update (_single_tensor_adamw), step 3, lr 0.01, wd 0.1
    p, g, m, v = x[0].clone(), x[1], x[2].clone(), x[3].clone()
    lr, b1, b2, eps, step = 0.01, 0.9, 0.999, 1e-8, 3
    p = p * (1 - lr * 0.1)
    m = m * b1 + g * (1 - b1)
    v = v * b2 + g * g * (1 - b2)
    denom = v.sqrt() / math.sqrt(1 - b2 ** step) + eps
    return p - (lr / (1 - b1 ** step)) * m / denom, m, v


# random ops: shapes and dtypes only
simple("bernoulli", lambda x, c: torch.bernoulli(x[0]))
simple("bernoulli_p", lambda x, c: torch.bernoulli(x[0], 0.3))
simple("randint", lambda x, c: torch.randint(-5, 9, [3, 7]))
simple("normal", lambda x, c: torch.normal(1.0, 2.0, [11]))
simple("normal_tensor", lambda x, c: torch.normal(x[0], x[1]))
simple("normal_", lambda x, c: torch.empty_like(x[0]).normal_())
simple("uniform_", lambda x, c: torch.empty_like(x[0]).uniform_(-1, 3))
simple("rand_like", lambda x, c: torch.rand_like(x[0]))
simple("randn_like", lambda x, c: torch.randn_like(x[0]))
simple("randperm", lambda x, c: torch.randperm(17 if c["sample"] == 0 else 0))
simple("multinomial", lambda x, c: torch.multinomial(x[0], 4, True) if c["sample"] == 0
       else torch.multinomial(x[0], 3, False))

# -- reduce (opinfo_reduce.cpp). dim_cases: samples 0..5 = all, [1] keepdim, [0, -1], [0] of
# 1-D, 0-d (all), [0] over an empty dim.
DIM_CASES = [([], False), ([1], True), ([0, -1], False), ([0], False), ([], False), ([0], False)]
ALONG = [1, 0, -2, 0, 0]


def multi_dim(fn, t, dims, keep):
    """fn(t, dim, keepdim) of torch ops that take one dim, over several (none: all)."""
    if not dims:
        return fn(t.reshape(-1), 0, False).reshape([1] * t.dim() if keep else [])
    for d in sorted((d % max(t.dim(), 1) for d in dims), reverse=True):
        t = fn(t, d, keep)
    return t


def dim_op(name, fn):
    def run(x, c):
        dims, keep = DIM_CASES[c["sample"]]
        return fn(x[0], dims, keep)
    simple(name, run)


dim_op("sum", lambda t, d, k: torch.sum(t, d, keepdim=k) if d else torch.sum(t))
dim_op("mean", lambda t, d, k: torch.mean(t, d, keepdim=k) if d else torch.mean(t))
dim_op("amax", lambda t, d, k: torch.amax(t, d, keepdim=k))
dim_op("amin", lambda t, d, k: torch.amin(t, d, keepdim=k))
dim_op("prod", lambda t, d, k: multi_dim(lambda a, i, kk: torch.prod(a, i, keepdim=kk), t, d, k))
dim_op("nansum", lambda t, d, k: torch.nansum(t, d, keepdim=k) if d else torch.nansum(t))
dim_op("nanmean", lambda t, d, k: torch.nanmean(t, d, keepdim=k) if d else torch.nanmean(t))
dim_op("var", lambda t, d, k: torch.var(t, dims_or_all(d), correction=1, keepdim=k))
dim_op("std", lambda t, d, k: torch.std(t, dims_or_all(d), correction=0, keepdim=k))
dim_op("logsumexp", lambda t, d, k: torch.logsumexp(t, d if d else list(range(t.dim())) or 0, keepdim=k))
dim_op("all", lambda t, d, k: multi_dim(lambda a, i, kk: torch.all(a, i, keepdim=kk), t, d, k))
dim_op("any", lambda t, d, k: multi_dim(lambda a, i, kk: torch.any(a, i, keepdim=kk), t, d, k))
dim_op("count_nonzero", lambda t, d, k: torch.count_nonzero(t, d) if d else torch.count_nonzero(t))
simple("argmax", lambda x, c: torch.argmax(x[0], 1) if c["sample"] == 0 else torch.argmax(x[0]))
simple("argmin", lambda x, c: torch.argmin(x[0], 1) if c["sample"] == 0 else torch.argmin(x[0], None, True))
simple("var_mean", lambda x, c: torch.var_mean(x[0], [1]) if c["sample"] == 0
       else torch.var_mean(x[0], None, correction=0, keepdim=True))
simple("std_mean", lambda x, c: torch.std_mean(x[0], [0]))
NORM_P = [2.0, 2.0, 1.0, 1.0, 3.0, 3.0, 0.5, 0.5]
simple("norm", lambda x, c: torch.linalg.vector_norm(x[0], NORM_P[c["sample"]], 1 if c["sample"] % 2 == 0 else None))
simple("norm", lambda x, c: torch.linalg.vector_norm(x[0], math.inf, 1) if c["sample"] == 0
       else torch.linalg.vector_norm(x[0], -math.inf, 0, keepdim=True), variant=1)
simple("norm", lambda x, c: torch.linalg.vector_norm(x[0], 0, 1), variant=2)
simple("max", lambda x, c: torch.max(x[0]))
simple("min", lambda x, c: torch.min(x[0]))
simple("max_dim", lambda x, c: tuple(torch.max(x[0], ALONG[c["sample"]])))
simple("min_dim", lambda x, c: tuple(torch.min(x[0], ALONG[c["sample"]], keepdim=True)))
simple("aminmax", lambda x, c: tuple(torch.aminmax(x[0], dim=0)) if c["sample"] == 0 else tuple(torch.aminmax(x[0])))
for n in ["cumsum", "cumprod", "logcumsumexp"]:
    simple(n, (lambda f: lambda x, c: f(x[0], ALONG[c["sample"]]))(getattr(torch, n)))
for n in ["cummax", "cummin"]:
    simple(n, (lambda f: lambda x, c: tuple(f(x[0], ALONG[c["sample"]])))(getattr(torch, n)))
# Tessera's sort is always stable (docs/kernels/reduce.md); an unstable sort may order ties
# (-0 and +0, repeated infinities in the specials cases) any way, so torch sorts stably too.
simple("sort", lambda x, c: tuple(torch.sort(x[0], dim=ALONG[c["sample"]], stable=True)))
simple("sort", lambda x, c: tuple(torch.sort(x[0], dim=ALONG[c["sample"]], descending=True, stable=True)), variant=1)
simple("argsort", lambda x, c: torch.sort(x[0], dim=ALONG[c["sample"]], descending=True, stable=True)[1])
simple("topk", lambda x, c: tuple([lambda t: torch.topk(t, 2), lambda t: torch.topk(t, 3, 0, False),
                                   lambda t: torch.topk(t, 0)][c["sample"]](x[0])))
simple("kthvalue", lambda x, c: tuple(torch.kthvalue(x[0], 2) if c["sample"] == 0
                                      else torch.kthvalue(x[0], 4, 0, True)))
simple("median", lambda x, c: torch.median(x[0]))
simple("mode", lambda x, c: torch.mode(x[0], 1)[0] if c["sample"] == 0 else torch.mode(x[0], 0, True)[0])
simple("median_dim", lambda x, c: tuple(torch.median(x[0], ALONG[c["sample"]])))

# -- shape (opinfo_shape.cpp)
simple("cat", lambda x, c: torch.cat(x, [1, 0, -1, 0][c["sample"]]))
simple("stack", lambda x, c: torch.stack(x, [1, -1][c["sample"]]))
simple("hstack", lambda x, c: torch.hstack(x))
simple("vstack", lambda x, c: torch.vstack(x))
simple("dstack", lambda x, c: torch.dstack(x))
simple("flatten", lambda x, c: torch.flatten(x[0], 1, 2) if c["sample"] == 0 else torch.flatten(x[0]))
simple("unflatten", lambda x, c: torch.unflatten(x[0], 1, (3, -1)))
simple("movedim", lambda x, c: torch.movedim(x[0], 0, 2))
simple("moveaxis", lambda x, c: torch.moveaxis(x[0], [0, 1], [2, 0]))
simple("swapdims", lambda x, c: torch.swapdims(x[0], -1, 1))
simple("swapaxes", lambda x, c: torch.swapaxes(x[0], 0, 2))
simple("flip", lambda x, c: torch.flip(x[0], [0, -1] if x[0].dim() >= 2 else [0]))
simple("fliplr", lambda x, c: torch.fliplr(x[0]))
simple("flipud", lambda x, c: torch.flipud(x[0]))
simple("roll", lambda x, c: [lambda t: torch.roll(t, (1, -7), (0, 1)), lambda t: torch.roll(t, 4),
                             lambda t: torch.roll(t, 1, 0)][c["sample"]](x[0]))
simple("repeat", lambda x, c: x[0].repeat(2, 1, 3) if c["sample"] == 0 else x[0].repeat(4))
simple("tile", lambda x, c: torch.tile(x[0], (2,)))
simple("repeat_interleave_int", lambda x, c: torch.repeat_interleave(x[0], 2, 0) if c["sample"] == 0
       else torch.repeat_interleave(x[0], 3))
simple("repeat_interleave", lambda x, c: torch.repeat_interleave(x[0], torch.tensor([1, 0, 2]), 0))
# torch 1.13 has no derivative for narrow_copy: gradient cases copy a narrow view instead.
simple("narrow_copy", lambda x, c: torch.narrow(x[0], 1, 1, 3).clone() if x[0].requires_grad
       else torch.narrow_copy(x[0], 1, 1, 3))
simple("tril", lambda x, c: torch.tril(x[0], -1))
simple("triu", lambda x, c: torch.triu(x[0], 1))
simple("diagonal", lambda x, c: torch.diagonal(x[0], 1, 2, 0) if c["sample"] == 0 else torch.diagonal(x[0], -1))
simple("diag_embed", lambda x, c: torch.diag_embed(x[0], 1) if c["sample"] == 0 else torch.diag_embed(x[0]))
simple("diag", lambda x, c: torch.diag(x[0], -2) if c["sample"] == 0 else torch.diag(x[0], 1))
simple("constant_pad_nd", lambda x, c: F.pad(x[0], [1, -1, 2, 0], value=1))
simple("pad", lambda x, c: [lambda t: F.pad(t, [2, 1, 1, 2], mode="reflect"),
                            lambda t: F.pad(t, [3, -1, 0, 2], mode="replicate"),
                            lambda t: F.pad(t, [4, 2], mode="circular"),
                            lambda t: F.pad(t, [1, 1], value=1.0)][c["sample"]](x[0]))


# -- parity-only cases (extras.cpp: variants after the registry's)
simple("std", lambda x, c: torch.std(x[0], [1]), variant=1)
simple("std_mean", lambda x, c: tuple(torch.std_mean(x[0], [1])), variant=1)
simple("median", lambda x, c: torch.median(x[0]), variant=1)
simple("max", lambda x, c: torch.max(x[0]), variant=1)
simple("min", lambda x, c: torch.min(x[0]), variant=1)
simple("native_dropout", lambda x, c: tuple(torch.native_dropout(x[0], 0.3, True)))
simple("index", lambda x, c: x[0][x[1]], variant=1)
simple("index_put", lambda x, c: torch.index_put(x[0], (x[1],), x[2]), variant=1)
simple("avg_pool2d", lambda x, c: F.avg_pool2d(x[0], 2), variant=1)
simple("sum", lambda x, c: torch.sum(x[0], dtype=torch.bool) if c["sample"] == 0
       else torch.sum(x[0], 1, dtype=torch.int64), variant=1)

for n in ["add", "mul", "div", "maximum", "eq"]:  # mixed operand dtypes
    simple(n, (lambda f: lambda x, c: f(x[0], x[1]))(getattr(torch, n)), variant=1)
simple("sum", lambda x, c: torch.sum(x[0]) if c["sample"] == 0 else torch.sum(x[0], [1]), variant=2)
simple("prod", lambda x, c: torch.prod(x[0]), variant=1)
simple("cumsum", lambda x, c: torch.cumsum(x[0], 1), variant=1)
simple("amax", lambda x, c: torch.amax(x[0], [0]), variant=1)

for n in ["add", "mul", "sub"]:  # narrow integer dtypes, wrapping (add: variant 2 after the mixed dtypes)
    simple(n, (lambda f: lambda x, c: f(x[0], x[1]))(getattr(torch, n)), variant=2 if n in ("add", "mul") else 1)
simple("abs", lambda x, c: torch.abs(x[0]), variant=1)
simple("neg", lambda x, c: torch.neg(x[0]), variant=1)


# ---- deviations -------------------------------------------------------------------------------
class Deviation:
    """One entry of deviations.json: which cases (op, and optionally variant, sample index or a
    glob of the description, dtype, layout, check) and why they are not compared."""

    KEYS = {"op", "variant", "sample", "desc", "dtype", "layout", "check", "reason"}

    def __init__(self, e, where):
        unknown = set(e) - self.KEYS
        if unknown or "op" not in e or not e.get("reason"):
            raise ValueError(f"{where}: a deviation needs 'op' and 'reason' (and may have "
                             f"{sorted(self.KEYS - {'op', 'reason'})}); got {sorted(e)}")
        self.e = e
        self.used = 0

    def matches(self, c, check):
        e = self.e
        if e["op"] != c["op"]:
            return False
        for k in ("variant", "sample", "dtype", "layout"):
            if k in e:
                want = e[k] if isinstance(e[k], list) else [e[k]]
                if c[k] not in want:
                    return False
        if "desc" in e and not fnmatch.fnmatchcase(c["desc"], e["desc"]):
            return False
        if "check" in e and e["check"] != check:
            return False
        return True

    def __str__(self):
        return ", ".join(f"{k}={v}" for k, v in self.e.items() if k != "reason")


def load_deviations(path):
    with open(path) as f:
        data = json.load(f)
    return [Deviation(e, f"{path} entry {i}") for i, e in enumerate(data["deviations"])]


# ---- comparison -------------------------------------------------------------------------------
def compare_tensor(got, want, tol, signed_zeros):
    """'' when `got` (Tessera) matches `want` (torch), else what differs."""
    if want is None:
        return "torch gives None where Tessera has a tensor"
    if not isinstance(want, torch.Tensor):
        want = torch.tensor(want)
    if list(got.shape) != list(want.shape):
        return f"shape {list(got.shape)} but torch has {list(want.shape)}"
    if got.dtype != want.dtype:
        return f"dtype {got.dtype} but torch has {want.dtype}"
    if got.numel() == 0 or tol is None:
        return ""
    if not got.is_floating_point():
        bad = got != want
        if bad.any():
            i = int(bad.reshape(-1).nonzero()[0])
            return (f"{int(bad.sum())} of {got.numel()} elements differ (exact match required); first at flat "
                    f"index {i}: Tessera {got.reshape(-1)[i].item()}, torch {want.reshape(-1)[i].item()}")
        return ""
    g, w = got.double().reshape(-1), want.detach().double().reshape(-1)
    rtol, atol = tol
    gn, wn = torch.isnan(g), torch.isnan(w)
    close = (g - w).abs() <= atol + rtol * w.abs()
    inf = torch.isinf(w) | torch.isinf(g)
    close = torch.where(inf, g == w, close)
    ok = torch.where(gn | wn, gn & wn, close)
    what = f"(rtol {rtol:g}, atol {atol:g})"
    if signed_zeros:
        zeros = (g == 0) & (w == 0)
        ok = ok & ~(zeros & (torch.signbit(g) != torch.signbit(w)))
        what += ", signed zeros"
    if not ok.all():
        i = int((~ok).nonzero()[0])
        return (f"{int((~ok).sum())} of {g.numel()} elements differ {what}; first at flat index {i}: "
                f"Tessera {g[i].item()!r}, torch {w[i].item()!r}")
    return ""


def as_tuple(r):
    if isinstance(r, (tuple, list)):
        return tuple(r)
    return (r,)


def scaled(tol, scale):
    return None if tol is None else (tol[0] * scale, tol[1] * scale)


class Checker:
    def __init__(self, cases, tensors, deviations, verbose):
        self.cases, self.t, self.devs, self.verbose = cases, tensors, deviations, verbose
        self.failures, self.skips = [], []
        self.compared = self.grad_compared = self.unmapped = 0
        self.ops_compared, self.ops_unmapped = set(), set()

    def tensors(self, names):
        return [None if n is None else self.t[n] for n in names]

    def label(self, c):
        return f"{c['op']}#{c['variant']} sample {c['sample']} [{c['desc']}] {c['dtype']} {c['layout']}"

    def deviation(self, c, check):
        for d in self.devs:
            if d.matches(c, check):
                return d
        return None

    def outcome(self, c, check, msg):
        """Records a compared check: a mismatch fails unless a deviation lists it."""
        d = self.deviation(c, check)
        if d is not None:
            d.used += 1
            self.skips.append(f"{self.label(c)} {check}: {d.e['reason']}"
                              + ("" if msg else " [agrees now: the entry may be stale]"))
            return
        if msg:
            self.failures.append(f"{self.label(c)} {check}: {msg}")
        elif self.verbose:
            print(f"ok   {self.label(c)} {check}")

    def run(self):
        for c in self.cases:
            fn = MAPPINGS.get((c["op"], c["variant"]))
            if fn is None:
                self.unmapped += 1
                self.ops_unmapped.add(f"{c['op']}#{c['variant']}")
                continue
            self.ops_compared.add(c["op"])
            if c["layout"] in ("grad", "kinks"):
                self.grad_compared += 1
                self.outcome(c, "grad", self.check_grad(fn, c))
            else:
                self.compared += 1
                self.outcome(c, "forward", self.check_forward(fn, c))

    def torch_call(self, fn, x, c):
        try:
            return as_tuple(fn(x, c)), None
        except Exception as e:  # noqa: BLE001 - torch refusing the call is a result to compare
            return None, f"{type(e).__name__}: {str(e).splitlines()[0] if str(e) else ''}"

    def results_msg(self, got, want, c, tol_table, signed_zeros):
        if len(got) != len(want):
            return f"{len(got)} results but torch gives {len(want)}"
        det = c["deterministic"]
        for k, (g, w) in enumerate(zip(got, want)):
            if g is None:
                if w is not None:
                    return f"result {k}: undefined but torch gives a tensor"
                continue
            tol = scaled(tol_table.get(g.dtype, (0, 0)), c.get("tol_scale", 1)) if det else None
            msg = compare_tensor(g, w, tol, signed_zeros)
            if msg:
                return f"result {k}: {msg}"
        return ""

    def check_forward(self, fn, c):
        x = self.tensors(c["inputs"])
        want, err = self.torch_call(fn, x, c)
        if "error" in c:
            return "" if err else f"Tessera threw ({c['error']}) but torch returns a result"
        if err:
            return f"torch raises {err} where Tessera returns a result"
        got = self.tensors(c["outputs"])
        return self.results_msg(got, want, c, FORWARD_TOL, True)

    def check_grad(self, fn, c):
        if "error" in c:
            return f"Tessera threw: {c['error']}"
        x = [None if t is None else t.clone() for t in self.tensors(c["inputs"])]
        for i in c["wrt"]:
            x[i].requires_grad_(True)
        want, err = self.torch_call(fn, x, c)
        if err:
            return f"torch raises {err} where Tessera returns a result"
        got = self.tensors(c["outputs"])
        msg = self.results_msg(got, want, c, FORWARD_TOL, False)
        if msg:
            return "forward before backward: " + msg
        if "grad_error" in c:
            return c["grad_error"]
        outs, cots = [], []
        for k, name in enumerate(c["cotangents"]):
            if name is None:
                continue
            if not want[k].requires_grad:
                return f"result {k} carries a gradient in Tessera but not in torch"
            outs.append(want[k])
            cots.append(self.t[name])
        for k, w in enumerate(want):
            if c["cotangents"][k] is None and isinstance(w, torch.Tensor) and w.requires_grad \
                    and w.is_floating_point():
                return f"result {k} carries a gradient in torch but not in Tessera"
        try:
            grads = torch.autograd.grad(outs, [x[i] for i in c["wrt"]], cots, allow_unused=True)
        except Exception as e:  # noqa: BLE001
            return f"torch.autograd.grad raises {type(e).__name__}: {e}"
        for j, (i, gname) in enumerate(zip(c["wrt"], c["grads"])):
            g = self.t[gname] if gname is not None else torch.zeros_like(x[i].detach())
            w = grads[j] if grads[j] is not None else torch.zeros_like(x[i].detach())
            tol = scaled(GRAD_TOL.get(g.dtype, (0, 0)), c.get("tol_scale", 1))
            msg = compare_tensor(g, w, tol, False)
            if msg:
                return f"gradient of input {i}: {msg}"
        return ""


# ---- self-test: the comparison must catch deliberately wrong mappings ---------------------------
# Each replaces one op's mapping with a wrong one, of the kind a real defect would be: a value a
# little off, an integer off by one, a wrong dtype, a NaN lost, a zero's sign, a gradient that
# does not flow. Every one must produce mismatches on the real cases.
# Entries: op -> (what is wrong, make(right mapping) -> wrong mapping).
WRONG_MAPPINGS = {
    "leaky_relu": ("slope 0.1 instead of 0.2", lambda right: lambda x, c: F.leaky_relu(x[0], 0.1)),
    "sum": ("off by a relative 1e-5", lambda right: lambda x, c: right(x, c) * (1 + 1e-5)),
    "argmax": ("index + 1", lambda right: lambda x, c: right(x, c) + 1),
    "abs": ("float64 result", lambda right: lambda x, c: right(x, c).double()),
    "isnan": ("NaN positions lost", lambda right: lambda x, c: torch.zeros_like(x[0], dtype=torch.bool)),
    "neg": ("0 - x: +0 where neg gives -0", lambda right: lambda x, c: 0 - x[0]),
    "mul": ("no gradient into the second operand", lambda right: lambda x, c: x[0] * x[1].detach()),
    "cumsum": ("a wrong gradient, same forward",
               lambda right: lambda x, c: right(x, c) + (x[0] - x[0].detach()) * 0.5),
}


def compare_unit_checks():
    """compare_tensor on hand-made pairs (got, want, tol, signed_zeros, should_differ); returns
    (number of checks, what went wrong)."""
    f = torch.float64
    nan, inf = float("nan"), float("inf")
    t = lambda v, dt=f: torch.tensor(v, dtype=dt)  # noqa: E731
    checks = [
        (t([1.0, 2.0]), t([1.0, 2.0]), (1e-7, 0), True, False),
        (t([1.0, 2.0]), t([1.0, 2.001]), (1e-7, 0), True, True),
        (t([1.0, nan]), t([1.0, nan]), (1e-7, 0), True, False),
        (t([1.0, nan]), t([1.0, 2.0]), (1e-7, 0), True, True),
        (t([1.0, 2.0]), t([1.0, nan]), (1e-7, 0), True, True),
        (t([inf, 1.0]), t([-inf, 1.0]), (1e-7, 0), True, True),
        (t([-0.0]), t([0.0]), (1e-7, 0), True, True),
        (t([-0.0]), t([0.0]), (1e-7, 0), False, False),
        (t([1, 2], torch.int64), t([1, 3], torch.int64), (0, 0), True, True),
        (t([1.0, 2.0]), t([[1.0, 2.0]]), (1e-7, 0), True, True),
        (t([1.0, 2.0], torch.float32), t([1.0, 2.0]), (1e-7, 0), True, True),
    ]
    bad = []
    for k, (g, w, tol, sz, differ) in enumerate(checks):
        if bool(compare_tensor(g, w, tol, sz)) != differ:
            bad.append(f"unit check {k}: compare_tensor({g.tolist()}, {w.tolist()}) "
                       f"{'found no difference' if differ else 'found a difference'}")
    return len(checks), bad


def self_test(cases, tensors):
    n_units, bad = compare_unit_checks()
    for name, (what, make) in WRONG_MAPPINGS.items():
        mine = [c for c in cases if c["op"] == name]
        saved = MAPPINGS[(name, 0)]
        MAPPINGS[(name, 0)] = make(saved)
        try:
            checker = Checker(mine, tensors, [], False)
            checker.run()
        finally:
            MAPPINGS[(name, 0)] = saved
        if not checker.failures:
            bad.append(f"a wrong mapping of {name} ({what}) was not caught in {len(mine)} cases")
        else:
            print(f"self-test: {name} ({what}): {len(checker.failures)} of {len(mine)} cases fail, e.g. "
                  f"{checker.failures[0][:160]}")
    for b in bad:
        print(f"FAIL self-test: {b}")
    print(f"parity self-test: {len(WRONG_MAPPINGS)} deliberately wrong mappings and {n_units} comparison unit "
          f"checks; {len(bad)} not caught")
    return 1 if bad else 0


def main(argv):
    args, ops, verbose, selftest = [], [], False, False
    deviations = os.path.join(HERE, "deviations.json")
    it = iter(argv)
    for a in it:
        if a == "--deviations":
            deviations = next(it)
        elif a == "--op":
            ops.append(next(it))
        elif a == "-v":
            verbose = True
        elif a == "--self-test":
            selftest = True
        elif a.startswith("-"):
            print(__doc__)
            return 2
        else:
            args.append(a)
    if len(args) != 1:
        print(__doc__)
        return 2
    start = time.time()
    warnings.filterwarnings("ignore")  # torch's advice (kl_div's batchmean, ...) is not a result
    torch.manual_seed(0)
    torch.set_num_threads(1)  # small tensors: threads cost more than they give, and ctest runs others beside
    with open(args[0] + ".json") as f:
        index = json.load(f)
    tensors = read_safetensors(args[0] + ".safetensors")
    cases = [c for c in index["cases"] if not ops or c["op"] in ops]
    if selftest:
        return self_test(cases, tensors)
    checker = Checker(cases, tensors, load_deviations(deviations), verbose)
    checker.run()

    for s in checker.skips:
        print(f"SKIP {s}")
    for d in checker.devs:
        if d.used == 0 and (not ops or d.e["op"] in ops):
            print(f"NOTE deviation matches no compared case (stale?): {d}")
    for f_ in checker.failures:
        print(f"FAIL {f_}")
    print(f"parity: torch {torch.__version__}; {len(checker.ops_compared)} ops mapped "
          f"({len(checker.ops_unmapped)} not mapped: {len(cases) - checker.compared - checker.grad_compared} cases"
          f"{': ' + ', '.join(sorted(checker.ops_unmapped)) if checker.ops_unmapped else ''}); "
          f"{checker.compared} forward cases, {checker.grad_compared} gradient cases compared; "
          f"{len(checker.skips)} skipped as listed deviations ({len(checker.devs)} entries); "
          f"{len(checker.failures)} mismatches; {time.time() - start:.1f} s")
    return 1 if checker.failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
