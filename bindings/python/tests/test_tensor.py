"""Tensors from Python: creation, metadata, NumPy conversion, operators and indexing, checked
against NumPy computing the same thing in float64."""
import math

import numpy as np
import pytest

import tessera as ts
from conftest import randn


def test_creation_and_metadata(rng):
    a = randn(rng, 3, 5)
    t = ts.tensor(a)
    assert t.shape == (3, 5) and t.dtype == ts.float64 and str(t.device) == "cpu:0"
    assert t.dtype == "float64" and t.device == "cpu:0"
    assert t.ndim == 2 and t.numel() == 15 and len(t) == 3 and t.stride() == (5, 1)
    np.testing.assert_array_equal(t.numpy(), a)
    assert ts.tensor([[1.5, 2.0]]).dtype == ts.float32  # Python floats: float32, as torch.tensor
    assert ts.tensor([1, 2]).dtype == ts.int64
    assert ts.tensor([True, False]).dtype == ts.bool
    assert ts.tensor(2.5).shape == () and ts.tensor(2.5).item() == 2.5
    assert ts.zeros(2, 3).shape == (2, 3) and ts.ones([4]).sum().item() == 4
    assert ts.full([2], 7, dtype=ts.int32).tolist() == [7, 7]
    np.testing.assert_allclose(ts.arange(0, 1, 0.25).numpy(), [0, 0.25, 0.5, 0.75])
    np.testing.assert_allclose(ts.linspace(0, 1, 5).numpy(), np.linspace(0, 1, 5), rtol=1e-6)
    np.testing.assert_array_equal(ts.eye(3).numpy(), np.eye(3))
    assert ts.empty(0, 4).shape == (0, 4)
    r = ts.randn(1000)
    assert abs(r.mean().item()) < 0.15 and 0.85 < r.std().item() < 1.15


def test_every_dtype_round_trips_through_numpy(rng):
    for name in ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]:
        a = (rng.standard_normal((4, 3)) * 50).astype(name)
        t = ts.tensor(a)
        assert t.dtype == name
        np.testing.assert_array_equal(t.numpy(), a)
        np.testing.assert_array_equal(t.t().numpy(), a.T)  # a strided view
    b = ts.tensor([1.5, -2.25]).bfloat16()
    assert b.dtype == ts.bfloat16 and b.numpy().dtype == np.float32  # NumPy has no bfloat16
    np.testing.assert_array_equal(b.numpy(), [1.5, -2.25])


def test_float8_dtypes_cast_and_read_back_as_float32():
    x = ts.tensor([0.3, -17.5, 470.0, 1e-3, 2.0])
    e4 = x.to(ts.float8_e4m3fn)
    assert e4.dtype == ts.float8_e4m3fn and e4.dtype.itemsize == 1 and e4.is_floating_point
    got = e4.numpy()  # NumPy has no float8: float32 values, exact
    assert got.dtype == np.float32
    # 0.3 -> 0.3125 (nearest e4m3fn), -17.5 -> -18 (step 2 there), 470 -> NaN (a cast does not
    # saturate), 1e-3 -> 2^-10 rounds to the subnormal 2^-9, 2 exact.
    np.testing.assert_array_equal(got[[0, 1, 3, 4]], np.array([0.3125, -18.0, 0.001953125, 2.0], np.float32))
    assert np.isnan(got[2])
    assert x.to("float8_e5m2").tolist()[:2] == [0.3125, -16.0]
    assert ts.tensor([3.0]).to(ts.float8_e8m0fnu).item() == 4.0  # 1.5 * 2^1 rounds up to 2^2
    assert ts.float4_e2m1fn_x2.itemsize == 1  # two e2m1 values per element
    with pytest.raises(Exception, match="promotion"):
        e4 + x


def test_operators_against_numpy(rng):
    a, b = randn(rng, 4, 5), randn(rng, 5)
    x, y = ts.tensor(a), ts.tensor(b)
    np.testing.assert_allclose((x + y).numpy(), a + b)
    np.testing.assert_allclose((x - 2).numpy(), a - 2)
    np.testing.assert_allclose((2 - x).numpy(), 2 - a)
    np.testing.assert_allclose((x * y).numpy(), a * b)
    np.testing.assert_allclose((x / y).numpy(), a / b)
    np.testing.assert_allclose((1 / y).numpy(), 1 / b)
    np.testing.assert_allclose((x // y).numpy(), np.floor(a / b))
    np.testing.assert_allclose((x % 0.7).numpy(), np.mod(a, 0.7), atol=1e-12)
    np.testing.assert_allclose((abs(x) ** 1.5).numpy(), np.abs(a) ** 1.5)
    np.testing.assert_allclose((2 ** x).numpy(), 2 ** a)
    np.testing.assert_allclose((x @ ts.tensor(a.T)).numpy(), a @ a.T)
    np.testing.assert_allclose((-x).numpy(), -a)
    np.testing.assert_array_equal((x > y).numpy(), a > b)
    np.testing.assert_array_equal((x <= 0).numpy(), a <= 0)
    np.testing.assert_array_equal((x == x).numpy(), np.ones_like(a, dtype=bool))
    m = ts.tensor(a > 0)
    np.testing.assert_array_equal((~m).numpy(), ~(a > 0))
    np.testing.assert_array_equal((m & (x < 1)).numpy(), (a > 0) & (a < 1))
    i = ts.tensor([6, 3, 12])
    np.testing.assert_array_equal((i & 5).tolist(), [4, 1, 4])
    np.testing.assert_array_equal((i | 1).tolist(), [7, 3, 13])
    z = x.clone()
    z += 1
    z *= y
    np.testing.assert_allclose(z.numpy(), (a + 1) * b)
    w = ts.tensor(a.copy())
    same = w
    w.add_(2.0)
    assert w is same  # in-place ops return their own object
    np.testing.assert_allclose(same.numpy(), a + 2)
    assert float(ts.tensor([2.5])) == 2.5 and int(ts.tensor([3])) == 3 and bool(ts.tensor(1))
    with pytest.raises(ValueError, match="ambiguous"):
        bool(x)


@pytest.mark.parametrize("index", [
    (1,), (-1,), (slice(1, 3),), (slice(None, None, 2),), (Ellipsis, 1), (None, 0), (1, None, slice(0, 2)),
    (slice(None), [0, 2, -1]), ([1, 0], [2, 2]), (slice(0, 2), [1, 3], Ellipsis), ([[0], [2]], slice(None), [1, 0]),
    (Ellipsis, [0, 1]), (1, [2, 0], slice(1, 3)), (slice(5, 1),),
])
def test_indexing_matches_numpy(rng, index):
    a = randn(rng, 3, 4, 5)
    x = ts.tensor(a)
    np_index = tuple(np.array(i) if isinstance(i, list) else i for i in index)
    np.testing.assert_array_equal(x[index].numpy(), a[np_index])
    np.testing.assert_array_equal(x[index if len(index) > 1 else index[0]].numpy(),
                                  a[np_index if len(np_index) > 1 else np_index[0]])


def test_mask_and_tensor_indices(rng):
    a = randn(rng, 4, 6)
    x = ts.tensor(a)
    m = a > 0
    np.testing.assert_array_equal(x[ts.tensor(m)].numpy(), a[m])
    np.testing.assert_array_equal(x[ts.tensor(m[:, 0])].numpy(), a[m[:, 0]])
    np.testing.assert_array_equal(x[:, ts.tensor([5, 0])].numpy(), a[:, [5, 0]])
    np.testing.assert_array_equal(x[ts.tensor(1)].numpy(), a[1])
    with pytest.raises(IndexError):
        x[4]
    with pytest.raises(IndexError, match="too many indices"):
        x[0, 0, 0]


def test_setitem(rng):
    a = randn(rng, 4, 5)
    x = ts.tensor(a.copy())
    x[1] = 0.0
    a[1] = 0.0
    x[:, 2:4] = ts.tensor(np.full((4, 2), 3.0))
    a[:, 2:4] = 3.0
    x[[0, 3], [1, 4]] = ts.tensor([7.0, 8.0], dtype=ts.float64)
    a[[0, 3], [1, 4]] = [7.0, 8.0]
    mask = a < 0
    x[ts.tensor(mask)] = -1.0
    a[mask] = -1.0
    x[1:3, [0, 2]] = ts.tensor(np.array([[10.0, 11.0], [12.0, 13.0]]))
    a[1:3, [0, 2]] = [[10.0, 11.0], [12.0, 13.0]]
    np.testing.assert_array_equal(x.numpy(), a)


def test_views_share_memory_and_conversions(rng):
    x = ts.tensor(randn(rng, 2, 3, 4))
    v = x.permute(2, 0, 1)
    assert v.shape == (4, 2, 3) and not v.is_contiguous() and v.shares_storage(x)
    assert x.view(6, 4).shape == (6, 4) and x.reshape([-1]).shape == (24,)
    assert x.unsqueeze(0).shape == (1, 2, 3, 4) and x[None].squeeze(0).shape == (2, 3, 4)
    assert x.transpose(0, 2).shape == (4, 3, 2) and x.T.shape == (4, 3, 2)
    parts = x.split(2, dim=2)
    assert [p.shape for p in parts] == [(2, 3, 2), (2, 3, 2)]
    assert len(x.chunk(3, 1)) == 3 and len(x.unbind(0)) == 2
    assert x.to(ts.float32).dtype == ts.float32 and x.to("int32").dtype == ts.int32
    assert x.float().dtype == ts.float32 and x.long().dtype == ts.int64
    assert x.to("cpu:0").is_same(x) and not x.to("cpu:0", copy=True).is_same(x)
    if len([d for d in ts.devices() if d.type == "cpu"]) > 1:
        assert str(x.to("cpu:1").device) == "cpu:1"
    assert "tensor(" in repr(x) and "float64" in repr(x)


def test_errors_are_python_exceptions_naming_the_op():
    a, b = ts.ones(2, 3), ts.ones(4, 5)
    with pytest.raises(ValueError) as e:
        ts.matmul(a, b)
    assert isinstance(e.value, ts.TesseraError) and isinstance(e.value, RuntimeError)
    assert e.value.code == "INVALID_ARGUMENT" and "matmul" in str(e.value) and "[2, 3]" in str(e.value)
    with pytest.raises(TypeError, match="unexpected keyword argument 'bogus'"):
        ts.sum(a, bogus=1)
    with pytest.raises(TypeError, match="argument 'dim' must be int"):
        ts.softmax(a, dim="x")
    with pytest.raises(TypeError, match="missing required argument 'dim'"):
        ts.softmax(a)
    with pytest.raises(ts.NotFoundError):
        ts._C.op("no_such_op")
    with pytest.raises(ValueError, match="unknown dtype 'float31'"):
        a.to(dtype="float31")
    with pytest.raises(LookupError, match="device type 'nosuchdevice' is not registered"):
        a.to("nosuchdevice:0")
    with pytest.raises(IndexError):
        ts.ops.index_select(a, 1, ts.tensor([7]))


def test_runtime_settings():
    assert ts.abi_version() >= (1, 4)
    names = [p["name"] for p in ts.plugins() if p["loaded"]]
    assert "cpu" in names
    stats = ts.memory_stats("cpu:0")
    assert stats["allocated_bytes"] >= 0 and "num_allocs" in stats
    before = ts.get_num_threads()
    ts.set_num_threads(1)
    assert ts.get_num_threads() == 1
    ts.set_num_threads(before)
    with pytest.raises(ValueError):
        ts.set_num_threads(0)
    ts.manual_seed(5)
    a = ts.rand(4).tolist()
    ts.manual_seed(5)
    assert ts.rand(4).tolist() == a
    assert all(0 <= v < 1 for v in a) and math.isclose(sum(a), sum(a))
