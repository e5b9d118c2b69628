"""Autograd from Python: backward and grad() against central finite differences in float64,
no_grad, create_graph, and errors."""
import numpy as np
import pytest

import tessera as ts
from conftest import randn


def numeric_grad(f, a, eps=1e-6):
    g = np.zeros_like(a)
    for k in np.ndindex(a.shape):
        p, m = a.copy(), a.copy()
        p[k] += eps
        m[k] -= eps
        g[k] = (f(ts.tensor(p)).item() - f(ts.tensor(m)).item()) / (2 * eps)
    return g


@pytest.mark.parametrize("name,f", [
    ("softmax-weighted", lambda x: (ts.softmax(x, 1) * ts.arange(4, dtype=ts.float64)).sum()),
    ("tanh-matmul", lambda x: ts.tanh(x @ x.T).sum()),
    ("indexing", lambda x: (x[1:, [0, 3]] ** 2).sum() + x[0, 2]),
    ("norm", lambda x: ts.norm(x)),
    ("layer_norm", lambda x: (ts.layer_norm(x, [4]) * ts.tensor([1.0, -2.0, 0.5, 3.0], dtype=ts.float64)).sum()),
    ("logsumexp-std", lambda x: ts.logsumexp(x, [1]).sum() + x.std()),
])
def test_backward_matches_finite_differences(rng, name, f):
    a = randn(rng, 3, 4)
    x = ts.tensor(a, requires_grad=True)
    f(x).backward()
    np.testing.assert_allclose(x.grad.numpy(), numeric_grad(f, a), rtol=1e-5, atol=1e-7, err_msg=name)


def test_grad_no_grad_and_create_graph(rng):
    x = ts.tensor(randn(rng, 5), requires_grad=True)
    y = (x ** 3).sum()
    (g,) = ts.autograd.grad(y, x, create_graph=True)
    np.testing.assert_allclose(g.detach().numpy(), 3 * x.detach().numpy() ** 2)
    (g2,) = ts.autograd.grad(g.sum(), x)
    np.testing.assert_allclose(g2.numpy(), 6 * x.detach().numpy())
    with ts.no_grad():
        z = x * 2
    assert not z.requires_grad and ts.is_grad_enabled()

    @ts.no_grad()
    def f(t):
        return t * 3

    assert not f(x).requires_grad
    assert (x * 2).requires_grad and (x * 2).grad_fn_name
    with pytest.raises(ts.TesseraError):
        ts.ones(3).backward()  # nothing requires grad
    leaf = ts.ones(2, requires_grad=True)
    (leaf * leaf).sum().backward()
    (leaf * leaf).sum().backward()
    np.testing.assert_allclose(leaf.grad.numpy(), [4.0, 4.0])  # accumulates
    leaf.grad = None
    assert leaf.grad is None
