"""Shared fixtures: seeded random inputs (never all zeros) and PyTorch where it is installed."""
import numpy as np
import pytest

import tessera as ts


@pytest.fixture
def rng():
    return np.random.default_rng(1234)


@pytest.fixture(scope="session")
def torch():
    return pytest.importorskip("torch", reason="python3-torch is not installed: PyTorch comparisons skipped")


def randn(rng, *shape, dtype=np.float64):
    a = rng.standard_normal(shape).astype(dtype)
    if a.size and not a.any():
        a.flat[0] = 1.0
    return a


@pytest.fixture(autouse=True)
def _seed():
    ts.manual_seed(0)
