"""tessera.optim: SGD, Adam and AdamW over the registry's fused step ops (sgd_step_,
adam_step_), which update each parameter and its state in one pass on its device."""
from . import _C, no_grad, ops


class Optimizer:
    def __init__(self, params, defaults):
        params = list(params)
        if not params:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(params[0], dict):
            params = [{"params": params}]
        self.param_groups = []
        for g in params:
            group = dict(defaults)
            group.update(g)
            group["params"] = list(group["params"])
            self.param_groups.append(group)
        self.state = {}

    def zero_grad(self, set_to_none=True):
        for g in self.param_groups:
            for p in g["params"]:
                if set_to_none:
                    p.grad = None
                elif p.grad is not None:
                    p.grad.zero_()

    def _state(self, p):
        return self.state.setdefault(id(p), {})


class SGD(Optimizer):
    def __init__(self, params, lr, momentum=0.0, dampening=0.0, weight_decay=0.0, nesterov=False, maximize=False):
        if lr < 0:
            raise ValueError(f"invalid learning rate {lr}")
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, dict(lr=lr, momentum=momentum, dampening=dampening, weight_decay=weight_decay,
                                      nesterov=nesterov, maximize=maximize))

    @no_grad()
    def step(self):
        for g in self.param_groups:
            for p in g["params"]:
                if p.grad is None:
                    continue
                st = self._state(p)
                buf = st.get("momentum_buffer")
                first = buf is None and g["momentum"] != 0
                if first:
                    buf = st["momentum_buffer"] = ops.full(list(p.shape), 0.0, p.dtype, p.device)
                ops.sgd_step_(p, p.grad, buf, g["lr"], g["momentum"], g["dampening"], g["weight_decay"],
                              g["nesterov"], g["maximize"], first)


class Adam(Optimizer):
    decoupled = False

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=None, amsgrad=False,
                 maximize=False):
        if weight_decay is None:
            weight_decay = 1e-2 if self.decoupled else 0.0
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay, amsgrad=amsgrad,
                                      maximize=maximize))

    @no_grad()
    def step(self):
        for g in self.param_groups:
            b1, b2 = g["betas"]
            for p in g["params"]:
                if p.grad is None:
                    continue
                st = self._state(p)
                if not st:
                    st["step"] = 0
                    st["exp_avg"] = ops.full(list(p.shape), 0.0, p.dtype, p.device)
                    st["exp_avg_sq"] = ops.full(list(p.shape), 0.0, p.dtype, p.device)
                    st["max_exp_avg_sq"] = (ops.full(list(p.shape), 0.0, p.dtype, p.device) if g["amsgrad"]
                                            else None)
                st["step"] += 1
                ops.adam_step_(p, p.grad, st["exp_avg"], st["exp_avg_sq"], st["max_exp_avg_sq"], st["step"],
                               g["lr"], b1, b2, g["eps"], g["weight_decay"], g["amsgrad"], self.decoupled,
                               g["maximize"])


class AdamW(Adam):
    """Adam with decoupled weight decay (default 1e-2, as torch.optim.AdamW)."""
    decoupled = True


__all__ = ["Optimizer", "SGD", "Adam", "AdamW", "_C"]
