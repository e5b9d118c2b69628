"""nn modules and optimizers from Python: a training loop that learns, optimizer steps equal to
PyTorch's on the same start, state dicts through safetensors files."""
import math

import numpy as np
import pytest

import tessera as ts
from conftest import randn


def spirals(n, rng):
    t = np.sqrt(rng.random(n)) * 3 * math.pi
    cls = rng.integers(0, 2, n)
    r = t / (3 * math.pi)
    x = np.stack([r * np.cos(t + cls * math.pi), r * np.sin(t + cls * math.pi)], 1)
    return (x + rng.normal(0, 0.02, x.shape)).astype(np.float32), cls.astype(np.int64)


def test_mlp_learns_two_spirals(rng):
    x, y = spirals(512, rng)
    X, Y = ts.tensor(x), ts.tensor(y)
    model = ts.nn.Sequential(ts.nn.Linear(2, 64), ts.nn.Tanh(), ts.nn.Linear(64, 64), ts.nn.Tanh(),
                             ts.nn.Linear(64, 2))
    opt = ts.optim.AdamW(model.parameters(), lr=0.02, weight_decay=0.0)
    loss_fn = ts.nn.CrossEntropyLoss()
    first = None
    for step in range(300):
        opt.zero_grad()
        loss = loss_fn(model(X), Y)
        loss.backward()
        opt.step()
        first = first if first is not None else loss.item()
    acc = (ts.argmax(model(X), 1) == Y).float().mean().item()
    assert loss.item() < first / 4 and acc > 0.9, (first, loss.item(), acc)
    assert len(list(model.parameters())) == 6 and "Linear" in repr(model)


@pytest.mark.parametrize("make", [
    lambda ts_or_torch, p: ts_or_torch.optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True, weight_decay=1e-3),
    lambda ts_or_torch, p: ts_or_torch.optim.Adam(p, lr=0.01, amsgrad=True),
    lambda ts_or_torch, p: ts_or_torch.optim.AdamW(p, lr=0.01, weight_decay=0.1),
], ids=["sgd-nesterov", "adam-amsgrad", "adamw"])
def test_optimizer_steps_match_torch(torch, rng, make):
    w0, x = randn(rng, 3, 4), randn(rng, 8, 4)
    tw = ts.nn.Parameter(ts.tensor(w0))
    pw = torch.nn.Parameter(torch.tensor(w0))
    topt, popt = make(ts, [tw]), make(torch, [pw])
    for _ in range(5):
        for w, opt, lib, xx in ((tw, topt, ts, ts.tensor(x)), (pw, popt, torch, torch.tensor(x))):
            opt.zero_grad()
            lib.tanh(xx @ w.t() if lib is torch else xx @ w.t()).pow(2).sum().backward()
            opt.step()
    np.testing.assert_allclose(tw.detach().numpy(), pw.detach().numpy(), rtol=1e-10, atol=1e-12)


def test_state_dict_through_safetensors(tmp_path, rng):
    model = ts.nn.Sequential(ts.nn.Linear(3, 4), ts.nn.ReLU(), ts.nn.LayerNorm(4), ts.nn.Linear(4, 2))
    path = str(tmp_path / "model.safetensors")
    ts.save(model.state_dict(), path, metadata={"format": "pt"})
    other = ts.nn.Sequential(ts.nn.Linear(3, 4), ts.nn.ReLU(), ts.nn.LayerNorm(4), ts.nn.Linear(4, 2))
    other.load_state_dict(ts.load(path))
    x = ts.tensor(randn(rng, 5, 3).astype(np.float32))
    np.testing.assert_array_equal(model(x).detach().numpy(), other(x).detach().numpy())
    assert ts.load_metadata(path)["format"] == "pt"
    assert list(ts.load(path)) == list(model.state_dict())
    with pytest.raises(KeyError):
        other.load_state_dict({"0.weight": ts.zeros(4, 3)})


def test_modules_train_eval_and_conv(rng):
    net = ts.nn.Sequential(ts.nn.Conv2d(1, 4, 3, padding=1), ts.nn.BatchNorm2d(4), ts.nn.ReLU(),
                           ts.nn.MaxPool2d(2), ts.nn.Flatten(), ts.nn.Dropout(0.5), ts.nn.Linear(4 * 4 * 4, 3))
    x = ts.tensor(randn(rng, 2, 1, 8, 8).astype(np.float32))
    out = net(x)
    assert out.shape == (2, 3)
    out.sum().backward()
    assert all(p.grad is not None for p in net.parameters())
    net.eval()
    a, b = net(x), net(x)
    np.testing.assert_array_equal(a.detach().numpy(), b.detach().numpy())  # no dropout, running stats
    emb = ts.nn.Embedding(10, 3, padding_idx=0)
    assert emb(ts.tensor([[0, 2]])).shape == (1, 2, 3) and emb.weight[0].abs().sum().item() == 0
