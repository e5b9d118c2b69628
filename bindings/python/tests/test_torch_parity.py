"""The same seeded inputs through Tessera and PyTorch (Debian's python3-torch): forward values
and gradients for a wide sample of ops, in float64 (exact-ish) and float32."""
import numpy as np
import pytest

import tessera as ts
from conftest import randn

# (name, tessera fn, torch fn, input shapes, positive inputs)
CASES = [
    ("add", lambda a, b: a + b, lambda a, b: a + b, [(3, 4), (4,)], False),
    ("mul-broadcast", lambda a, b: a * b, lambda a, b: a * b, [(2, 1, 4), (3, 1)], False),
    ("div", lambda a, b: a / b, lambda a, b: a / b, [(3, 4), (3, 4)], True),
    ("matmul", lambda a, b: a @ b, lambda a, b: a @ b, [(2, 3, 4), (4, 5)], False),
    ("exp", lambda a: ts.exp(a), lambda a: a.exp(), [(5, 3)], False),
    ("log", lambda a: ts.log(a), lambda a: a.log(), [(5, 3)], True),
    ("sqrt", lambda a: a.sqrt(), lambda a: a.sqrt(), [(7,)], True),
    ("tanh", lambda a: a.tanh(), lambda a: a.tanh(), [(4, 4)], False),
    ("sigmoid", lambda a: a.sigmoid(), lambda a: a.sigmoid(), [(4, 4)], False),
    ("gelu", lambda a: ts.gelu(a), lambda a: __import__("torch").nn.functional.gelu(a), [(6,)], False),
    ("softmax", lambda a: ts.softmax(a, 1), lambda a: a.softmax(1), [(3, 7)], False),
    ("log_softmax", lambda a: ts.log_softmax(a, 0), lambda a: a.log_softmax(0), [(3, 7)], False),
    ("sum-dims", lambda a: a.sum([0, 2], keepdim=True), lambda a: a.sum([0, 2], keepdim=True), [(2, 3, 4)], False),
    ("mean", lambda a: a.mean(1), lambda a: a.mean(1), [(4, 5)], False),
    ("var", lambda a: ts.var(a, [1]), lambda a: a.var(1), [(4, 5)], False),
    ("amax", lambda a: ts.amax(a, [1]), lambda a: a.amax(1), [(4, 5)], False),
    ("cumsum", lambda a: ts.cumsum(a, 1), lambda a: a.cumsum(1), [(3, 6)], False),
    ("transpose-contig", lambda a: a.t().contiguous() * 2, lambda a: a.t().contiguous() * 2, [(3, 5)], False),
    ("index", lambda a: a[1:, [0, 2]], lambda a: a[1:, [0, 2]], [(4, 3)], False),
    ("where", lambda a, b: ts.where(a > 0, a, b), lambda a, b: __import__("torch").where(a > 0, a, b),
     [(3, 4), (3, 4)], False),
    ("layer_norm", lambda a: ts.layer_norm(a, [5]), lambda a: __import__("torch").nn.functional.layer_norm(a, [5]),
     [(3, 5)], False),
    ("linear", lambda a, w, b: ts.linear(a, w, b), lambda a, w, b: __import__("torch").nn.functional.linear(a, w, b),
     [(4, 3), (2, 3), (2,)], False),
    ("conv2d", lambda a, w: ts.conv2d(a, w, None, 1, 1), lambda a, w: __import__("torch").nn.functional.conv2d(
        a, w, None, 1, 1), [(2, 3, 5, 5), (4, 3, 3, 3)], False),
    ("max_pool2d", lambda a: ts.max_pool2d(a, 2), lambda a: __import__("torch").nn.functional.max_pool2d(a, 2),
     [(1, 2, 4, 6)], False),
    ("pow", lambda a, b: a ** b, lambda a, b: a ** b, [(3,), (3,)], True),
    ("clamp", lambda a: a.clamp(-0.5, 0.5), lambda a: a.clamp(-0.5, 0.5), [(10,)], False),
]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_forward_and_gradients_match_torch(torch, rng, case, dtype):
    name, tf, pf, shapes, positive = case
    arrays = [randn(rng, *s) for s in shapes]
    if positive:
        arrays = [np.abs(a) + 0.5 for a in arrays]
    tin = [ts.tensor(a).to(dtype).requires_grad_() for a in arrays]
    pin = [torch.tensor(a).to(getattr(torch, dtype)).requires_grad_() for a in arrays]
    tout, pout = tf(*tin), pf(*pin)
    rtol, atol = (1e-10, 1e-12) if dtype == "float64" else (2e-5, 1e-5)
    np.testing.assert_allclose(tout.detach().numpy(), pout.detach().numpy(), rtol=rtol, atol=atol, err_msg=name)
    cot = randn(rng, *pout.shape)
    tout.backward(ts.tensor(cot).to(dtype))
    pout.backward(torch.tensor(cot).to(getattr(torch, dtype)))
    for t, p in zip(tin, pin):
        np.testing.assert_allclose(t.grad.numpy(), p.grad.numpy(), rtol=rtol * 10, atol=atol * 10, err_msg=name)


def test_integer_and_bool_ops_are_exact(torch, rng):
    a = rng.integers(-50, 50, (4, 5))
    b = rng.integers(1, 9, (4, 5))
    for tf, pf in [(lambda x, y: x // y, lambda x, y: x // y), (lambda x, y: x % y, lambda x, y: x % y),
                   (lambda x, y: x * y + 3, lambda x, y: x * y + 3), (lambda x, y: x > y, lambda x, y: x > y),
                   (lambda x, y: ts.cumsum(x, 0), lambda x, y: x.cumsum(0))]:
        np.testing.assert_array_equal(tf(ts.tensor(a), ts.tensor(b)).numpy(),
                                      pf(torch.tensor(a), torch.tensor(b)).numpy())
