"""tessera.autograd: gradients of outputs with respect to inputs (torch.autograd.grad)."""
from . import _C


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False, allow_unused=False):
    single = not isinstance(inputs, (list, tuple))
    outs = [outputs] if not isinstance(outputs, (list, tuple)) else list(outputs)
    ins = [inputs] if single else list(inputs)
    gos = None
    if grad_outputs is not None:
        gos = [grad_outputs] if not isinstance(grad_outputs, (list, tuple)) else list(grad_outputs)
    retain = create_graph if retain_graph is None else retain_graph
    return _C.autograd_grad(outs, ins, gos, retain, create_graph, allow_unused)


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False):
    tensors = [tensors] if not isinstance(tensors, (list, tuple)) else list(tensors)
    grads = grad_tensors if isinstance(grad_tensors, (list, tuple)) else [grad_tensors] * len(tensors)
    for t, g in zip(tensors, grads):
        t.backward(g, retain_graph=True if len(tensors) > 1 else retain_graph, create_graph=create_graph)
