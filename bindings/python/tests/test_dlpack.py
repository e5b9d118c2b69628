"""DLPack exchange with NumPy and PyTorch: no copies (the same data pointer both ways), every
dtype both sides speak, strided views, lifetimes (the producer's memory outlives the consumer's
last view), and capsules that can be consumed once."""
import gc

import numpy as np
import pytest

import tessera as ts
from conftest import randn


def test_numpy_round_trip_without_copies(rng):
    a = randn(rng, 4, 6)
    t = ts.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data
    t[0, 0] = 42.0
    assert a[0, 0] == 42.0  # the same memory
    back = np.from_dlpack(t)
    assert back.ctypes.data == t.data_ptr()
    np.testing.assert_array_equal(back, a)
    view = ts.from_numpy(a[:, ::2])  # strided
    assert view.stride() == (6, 2) and view.data_ptr() == a.ctypes.data
    np.testing.assert_array_equal(view.numpy(), a[:, ::2])
    n = t.numpy()
    assert n.ctypes.data == t.data_ptr()  # numpy() is a view for CPU tensors


def test_numpy_memory_outlives_the_array():
    a = np.arange(12, dtype=np.float32).reshape(3, 4) + 1
    t = ts.from_numpy(a)
    expected = a.copy()
    del a
    gc.collect()
    np.testing.assert_array_equal(t.numpy(), expected)
    arr = ts.arange(6).reshape(2, 3).numpy()
    gc.collect()
    np.testing.assert_array_equal(arr, [[0, 1, 2], [3, 4, 5]])  # the array keeps the tensor alive


def test_capsules(rng):
    t = ts.tensor(randn(rng, 3))
    cap = t.__dlpack__()
    u = ts.from_dlpack(cap)
    assert u.data_ptr() == t.data_ptr()
    with pytest.raises(ValueError, match="consumed once"):
        ts.from_dlpack(cap)
    vcap = t.__dlpack__(max_version=(1, 0))
    assert "dltensor_versioned" in repr(vcap)
    assert ts.from_dlpack(vcap).data_ptr() == t.data_ptr()
    unused = t.__dlpack__()
    del unused  # an unconsumed capsule drops its reference when collected
    gc.collect()
    assert t.tolist() == u.tolist()
    assert t.__dlpack_device__() == (1, 0)
    r = np.zeros(3)
    r.setflags(write=False)
    with pytest.raises(ValueError, match="read-only"):
        ts.from_numpy(r)


@pytest.mark.parametrize("dtype", ["uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
                                   "float64", "bool"])
def test_torch_round_trip_without_copies(torch, rng, dtype):
    tdt = getattr(torch, dtype)
    src = torch.from_numpy(randn(rng, 5, 4) * 10).to(tdt)
    if dtype == "bool":
        src = src != 0
    try:
        t = ts.from_dlpack(src)
    except (ValueError, RuntimeError, BufferError) as e:
        if dtype == "bool":
            pytest.skip(f"PyTorch {torch.__version__} does not export bool through DLPack: {e}")
        raise
    assert t.data_ptr() == src.data_ptr()
    assert t.dtype == dtype and t.shape == tuple(src.shape)
    back = torch.utils.dlpack.from_dlpack(t.t())
    assert back.data_ptr() == src.data_ptr() and back.stride() == (1, 4)
    assert torch.equal(back, src.t())


def test_torch_sees_writes_and_keeps_memory_alive(torch):
    t = ts.arange(8, dtype=ts.float32)
    x = torch.from_dlpack(t)
    x.mul_(2)
    assert t.tolist() == [0, 2, 4, 6, 8, 10, 12, 14]
    del t
    gc.collect()
    assert x.tolist() == [0, 2, 4, 6, 8, 10, 12, 14]
    y = torch.arange(5.0)
    u = ts.from_dlpack(y)
    del y
    gc.collect()
    assert u.tolist() == [0, 1, 2, 3, 4]
