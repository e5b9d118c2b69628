"""Every registry op is a Python function generated from its schema: keyword arguments by the
schema's names, the core's defaults, out=, several results, docstrings and signatures."""
import inspect

import numpy as np
import pytest

import tessera as ts
from conftest import randn


def test_every_registry_op_is_exposed():
    names = [op.name for op in ts._C.ops()]
    assert len(names) > 300
    for n in names:
        if "::" in n:
            ns, short = n.split("::")
            assert callable(getattr(getattr(ts.ops, ns), short))
        else:
            assert callable(getattr(ts.ops, n))
            if not n.startswith("_"):
                assert hasattr(ts, n) or n in {"tensor"}, n
    assert ts.ops.softmax.schema.startswith("softmax(Tensor self, int dim")
    sig = inspect.signature(ts.sum)
    assert list(sig.parameters)[:4] == ["self", "dim", "keepdim", "dtype"]
    assert sig.parameters["keepdim"].default is False
    assert "sum(" in ts.sum.__doc__


def test_keywords_defaults_and_positional(rng):
    a = randn(rng, 3, 4)
    x = ts.tensor(a)
    np.testing.assert_allclose(ts.sum(x, dim=[1], keepdim=True).numpy(), a.sum(1, keepdims=True))
    np.testing.assert_allclose(ts.sum(x, [0]).numpy(), a.sum(0))
    np.testing.assert_allclose(ts.sum(x, keepdim=True).numpy(), a.sum(keepdims=True))  # dim left at its default
    np.testing.assert_allclose(x.sum(1).numpy(), a.sum(1))
    np.testing.assert_allclose(ts.add(x, x, alpha=2).numpy(), 3 * a)
    np.testing.assert_allclose(ts.softmax(x, dim=1, dtype=ts.float32).numpy(),
                               np.exp(a) / np.exp(a).sum(1, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(ts.gelu(x, approximate="tanh").numpy(),
                               0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3))), rtol=1e-6)
    np.testing.assert_allclose(x.clamp(min=-0.5, max=0.5).numpy(), np.clip(a, -0.5, 0.5))
    np.testing.assert_allclose(ts.sum(x, dtype="float32").numpy(), a.sum(), rtol=1e-6)


def test_out_and_several_results(rng):
    a = randn(rng, 3, 5)
    x = ts.tensor(a)
    out = ts.zeros(3, 5, dtype=ts.float64)
    r = ts.mul(x, 2.0, out=out)
    assert r is out
    np.testing.assert_allclose(out.numpy(), 2 * a)
    values, indices = ts.max_dim(x, 1)
    np.testing.assert_allclose(values.numpy(), a.max(1))
    np.testing.assert_array_equal(indices.numpy(), a.argmax(1))
    v, i = ts.sort(x, dim=1, descending=True)
    np.testing.assert_allclose(v.numpy(), -np.sort(-a, 1))
    ov, oi = ts.zeros(3, dtype=ts.float64), ts.zeros(3, dtype=ts.int64)
    ts.min_dim(x, 1, out=(ov, oi))
    np.testing.assert_array_equal(oi.numpy(), a.argmin(1))
    with pytest.raises(TypeError, match="out= needs 2 tensors"):
        ts.min_dim(x, 1, out=ov)
    s = ts.stack([x, x], 0)
    assert s.shape == (2, 3, 5)
    assert ts.cat([x, x], dim=1).shape == (3, 10)


def test_scalars_promote_like_python_numbers():
    i = ts.tensor([1, 2, 3])
    assert (i + 1).dtype == ts.int64
    assert (i * 1.5).dtype == ts.float32
    assert (ts.tensor([1.0], dtype=ts.float16) + 1.0).dtype == ts.float16
    assert ts.where(i > 1, i, 0).tolist() == [0, 2, 3]


def test_plugin_ops_are_namespaced():
    loaded = [p["name"] for p in ts.plugins() if p["loaded"]]
    if not hasattr(ts.ops, "example"):
        pytest.skip(f"the example op plugin is not on the plugin path (loaded: {loaded})")
    assert callable(ts.ops.example.gemm_bias_act)
