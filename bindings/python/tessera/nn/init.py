"""tessera.nn.init: in-place initializers (PyTorch's formulas), drawn from the runtime's Philox
generator so tessera.manual_seed makes them reproducible."""
import math

from .. import _C, no_grad, rand, randn


def _fans(t):
    if t.ndim < 2:
        raise ValueError("fan in and fan out need a tensor of at least 2 dims")
    receptive = 1
    for s in t.shape[2:]:
        receptive *= s
    return t.shape[1] * receptive, t.shape[0] * receptive


@no_grad()
def uniform_(t, a=0.0, b=1.0):
    return t.copy_(rand(list(t.shape), dtype=t.dtype, device=t.device) * (b - a) + a)


@no_grad()
def normal_(t, mean=0.0, std=1.0):
    return t.copy_(randn(list(t.shape), dtype=t.dtype, device=t.device) * std + mean)


@no_grad()
def zeros_(t):
    return t.fill_(0.0)


@no_grad()
def ones_(t):
    return t.fill_(1.0)


def kaiming_uniform_(t, a=math.sqrt(5)):
    fan_in, _ = _fans(t)
    gain = math.sqrt(2.0 / (1 + a * a))
    bound = gain * math.sqrt(3.0 / fan_in)
    return uniform_(t, -bound, bound)


def xavier_uniform_(t, gain=1.0):
    fan_in, fan_out = _fans(t)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out))
    return uniform_(t, -bound, bound)


__all__ = ["uniform_", "normal_", "zeros_", "ones_", "kaiming_uniform_", "xavier_uniform_", "_C"]
