"""Modules: parameters and submodules registered by attribute assignment, train/eval, state
dicts, device moves; layers written with registry ops (their gradients come from the ops)."""
import collections
import math

from .. import Tensor, _C, no_grad, ops, tensor as _tensor_fn
from . import functional as F
from . import init


def Parameter(data, requires_grad=True):
    """A leaf tensor that a Module registers as a parameter when assigned to it."""
    t = data.detach() if isinstance(data, Tensor) else _tensor_fn(data)
    return t.requires_grad_(requires_grad)


class Module:
    def __init__(self):
        object.__setattr__(self, "_parameters", collections.OrderedDict())
        object.__setattr__(self, "_buffers", collections.OrderedDict())
        object.__setattr__(self, "_modules", collections.OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise AttributeError("call Module.__init__() before assigning attributes")
        for d in (self._parameters, self._buffers, self._modules):
            d.pop(name, None)
        if isinstance(value, Module):
            self.__dict__.pop(name, None)
            self._modules[name] = value
        elif isinstance(value, Tensor) and value.requires_grad and value.is_leaf:
            self.__dict__.pop(name, None)
            self._parameters[name] = value
        else:
            object.__setattr__(self, name, value)

    def __getattr__(self, name):
        for d in ("_parameters", "_buffers", "_modules"):
            table = self.__dict__.get(d)
            if table is not None and name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def register_buffer(self, name, t):
        self._buffers[name] = t

    def register_parameter(self, name, t):
        self._parameters[name] = t

    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} has no forward()")

    def __call__(self, *args, **kwargs):
        return self.forward(*args, **kwargs)

    def named_modules(self, prefix=""):
        yield prefix, self
        for name, m in self._modules.items():
            yield from m.named_modules(prefix + ("." if prefix else "") + name)

    def modules(self):
        return (m for _, m in self.named_modules())

    def children(self):
        return iter(self._modules.values())

    def named_parameters(self, prefix=""):
        for mname, m in self.named_modules(prefix):
            for name, p in m._parameters.items():
                yield mname + ("." if mname else "") + name, p

    def parameters(self):
        return (p for _, p in self.named_parameters())

    def named_buffers(self, prefix=""):
        for mname, m in self.named_modules(prefix):
            for name, b in m._buffers.items():
                yield mname + ("." if mname else "") + name, b

    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none:
                p.grad = None
            elif p.grad is not None:
                p.grad.zero_()

    def state_dict(self):
        sd = collections.OrderedDict()
        for name, p in self.named_parameters():
            sd[name] = p.detach()
        for name, b in self.named_buffers():
            sd[name] = b
        return sd

    @no_grad()
    def load_state_dict(self, state_dict, strict=True):
        own = dict(self.named_parameters())
        own.update(self.named_buffers())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        if strict and (missing or unexpected):
            raise KeyError(f"load_state_dict: missing {missing}, unexpected {unexpected}")
        for k, t in own.items():
            if k in state_dict:
                src = state_dict[k]
                if tuple(src.shape) != tuple(t.shape):
                    raise ValueError(f"load_state_dict: '{k}' has shape {tuple(src.shape)}, the module "
                                     f"expects {tuple(t.shape)}")
                t.copy_(src)
        return missing, unexpected

    def _apply(self, fn):
        for m in self.modules():
            for name, p in list(m._parameters.items()):
                with no_grad():
                    moved = fn(p).detach().requires_grad_(p.requires_grad)
                m._parameters[name] = moved
            for name, b in list(m._buffers.items()):
                m._buffers[name] = fn(b)
        return self

    def to(self, *args, **kwargs):
        return self._apply(lambda t: t.to(*args, **kwargs))

    def double(self):
        return self.to(_C.float64)

    def float(self):
        return self.to(_C.float32)

    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"{type(self).__name__}({self.extra_repr()}"]
        for name, m in self._modules.items():
            lines.append(f"  ({name}): " + repr(m).replace("\n", "\n  "))
        return lines[0] + ")" if len(lines) == 1 else "\n".join(lines) + "\n)"


class Sequential(Module):
    def __init__(self, *mods):
        super().__init__()
        for i, m in enumerate(mods):
            setattr(self, str(i), m)

    def forward(self, x):
        for m in self._modules.values():
            x = m(x)
        return x

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __len__(self):
        return len(self._modules)


class ModuleList(Module):
    def __init__(self, mods=()):
        super().__init__()
        for m in mods:
            self.append(m)

    def append(self, m):
        setattr(self, str(len(self._modules)), m)
        return self

    def __getitem__(self, i):
        return list(self._modules.values())[i]

    def __iter__(self):
        return iter(self._modules.values())

    def __len__(self):
        return len(self._modules)


class Linear(Module):
    def __init__(self, in_features, out_features, bias=True, dtype=None):
        super().__init__()
        self.in_features, self.out_features = in_features, out_features
        self.weight = Parameter(init.kaiming_uniform_(_empty([out_features, in_features], dtype)))
        bound = 1 / math.sqrt(in_features) if in_features > 0 else 0
        self.bias = Parameter(init.uniform_(_empty([out_features], dtype), -bound, bound)) if bias else None

    def forward(self, x):
        return F.linear(x, self.weight, self.bias)

    def extra_repr(self):
        return f"in_features={self.in_features}, out_features={self.out_features}, bias={self.bias is not None}"


class Conv2d(Module):
    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1, bias=True,
                 dtype=None):
        super().__init__()
        k = (kernel_size, kernel_size) if isinstance(kernel_size, int) else tuple(kernel_size)
        self.stride, self.padding, self.dilation, self.groups = stride, padding, dilation, groups
        self.weight = Parameter(init.kaiming_uniform_(_empty([out_channels, in_channels // groups, *k], dtype)))
        fan_in = in_channels // groups * k[0] * k[1]
        bound = 1 / math.sqrt(fan_in)
        self.bias = Parameter(init.uniform_(_empty([out_channels], dtype), -bound, bound)) if bias else None

    def forward(self, x):
        return F.conv2d(x, self.weight, self.bias, self.stride, self.padding, self.dilation, self.groups)


class Embedding(Module):
    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, dtype=None):
        super().__init__()
        self.padding_idx = padding_idx
        w = init.normal_(_empty([num_embeddings, embedding_dim], dtype))
        if padding_idx is not None:
            with no_grad():
                w[padding_idx] = 0.0
        self.weight = Parameter(w)

    def forward(self, idx):
        return F.embedding(idx, self.weight, self.padding_idx)


class LayerNorm(Module):
    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, dtype=None):
        super().__init__()
        self.normalized_shape = [normalized_shape] if isinstance(normalized_shape, int) else list(normalized_shape)
        self.eps = eps
        if elementwise_affine:
            self.weight = Parameter(init.ones_(_empty(self.normalized_shape, dtype)))
            self.bias = Parameter(init.zeros_(_empty(self.normalized_shape, dtype)))
        else:
            self.weight = self.bias = None

    def forward(self, x):
        return F.layer_norm(x, self.normalized_shape, self.weight, self.bias, self.eps)


class BatchNorm2d(Module):
    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=True, dtype=None):
        super().__init__()
        self.eps, self.momentum = eps, momentum
        self.weight = Parameter(init.ones_(_empty([num_features], dtype))) if affine else None
        self.bias = Parameter(init.zeros_(_empty([num_features], dtype))) if affine else None
        self.register_buffer("running_mean", init.zeros_(_empty([num_features], dtype)))
        self.register_buffer("running_var", init.ones_(_empty([num_features], dtype)))

    def forward(self, x):
        return F.batch_norm(x, self.weight, self.bias, self.running_mean, self.running_var, self.training,
                            self.momentum, self.eps)


class Dropout(Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)


class _Elementwise(Module):
    fn = None

    def forward(self, x):
        return type(self).fn(x)


class ReLU(_Elementwise):
    fn = staticmethod(F.relu)


class Tanh(_Elementwise):
    fn = staticmethod(F.tanh)


class Sigmoid(_Elementwise):
    fn = staticmethod(F.sigmoid)


class SiLU(_Elementwise):
    fn = staticmethod(F.silu)


class Identity(_Elementwise):
    fn = staticmethod(lambda x: x)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, x):
        return F.gelu(x, self.approximate)


class Softmax(Module):
    def __init__(self, dim):
        super().__init__()
        self.dim = dim

    def forward(self, x):
        return F.softmax(x, self.dim)


class LogSoftmax(Softmax):
    def forward(self, x):
        return F.log_softmax(x, self.dim)


class Flatten(Module):
    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, x):
        return ops.flatten(x, self.start_dim, self.end_dim)


class MaxPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False):
        super().__init__()
        self.args = (kernel_size, stride, padding, dilation, ceil_mode)

    def forward(self, x):
        return F.max_pool2d(x, *self.args)


class AvgPool2d(Module):
    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False, count_include_pad=True):
        super().__init__()
        self.args = (kernel_size, stride, padding, ceil_mode, count_include_pad)

    def forward(self, x):
        return F.avg_pool2d(x, *self.args)


class MSELoss(Module):
    def __init__(self, reduction="mean"):
        super().__init__()
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, self.reduction)


class L1Loss(MSELoss):
    def forward(self, input, target):
        return F.l1_loss(input, target, self.reduction)


class CrossEntropyLoss(Module):
    def __init__(self, weight=None, ignore_index=-100, reduction="mean", label_smoothing=0.0):
        super().__init__()
        self.weight, self.ignore_index = weight, ignore_index
        self.reduction, self.label_smoothing = reduction, label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, self.reduction, self.ignore_index, self.label_smoothing)


def _empty(shape, dtype):
    return ops.full(list(shape), 0.0, dtype or _C.float32, None)
