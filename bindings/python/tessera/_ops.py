"""Every registry op as a Python function, generated at import time from the runtime's registry.

Each function takes its schema's arguments by position or by name, with the core's defaults
(read through the ABI's op_arg records, never by parsing text), carries the schema as its
docstring and an ``inspect.Signature``, and accepts ``out=`` (a tensor, or a tuple for ops with
several results). Plugin ops ``ns::name`` live under ``tessera.ops.ns.name``.
"""
import inspect
import keyword
import types

from . import _C

_KIND_TO_ANNOTATION = {
    "Tensor": "Tensor", "int": "int", "float": "float", "bool": "bool", "int[]": "Sequence[int]",
    "str": "str", "ScalarType": "dtype", "Device": "device", "Scalar": "Number", "Tensor[]": "Sequence[Tensor]",
}


def _signature(op):
    params = []
    for a in op.arguments:
        name = a["name"] if not keyword.iskeyword(a["name"]) else a["name"] + "_"
        annotation = _KIND_TO_ANNOTATION.get(a["kind"], inspect.Parameter.empty)
        if a["optional"]:
            annotation = f"Optional[{annotation}]"
        default = a["default"] if a["has_default"] else inspect.Parameter.empty
        params.append(inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=default,
                                        annotation=annotation))
    params.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    return inspect.Signature(params)


def _make(op):
    call = op.__call__

    def fn(*args, **kwargs):
        return call(*args, **kwargs)

    short = op.name.split("::")[-1]
    fn.__name__ = short
    fn.__qualname__ = short
    fn.__doc__ = f"{op.schema}\n\nTessera registry op (called through the C ABI); out= writes into given tensors."
    try:
        fn.__signature__ = _signature(op)
    except (ValueError, TypeError):  # a default Python cannot place: keep the plain signature
        pass
    fn.op = op
    fn.schema = op.schema
    return fn


class _Namespace(types.SimpleNamespace):
    """tessera.ops and its plugin namespaces: attribute access to op functions."""

    def __iter__(self):
        return iter(sorted(self.__dict__))

    def __repr__(self):
        return f"<tessera ops: {len(self.__dict__)} entries>"


def build():
    """(ops namespace, {name: function} of the core's ops, [functions taking self first])."""
    ops = _Namespace()
    core = {}
    methods = []
    for op in _C.ops():
        fn = _make(op)
        if "::" in op.name:
            ns, short = op.name.split("::", 1)
            space = getattr(ops, ns, None)
            if space is None:
                space = _Namespace()
                setattr(ops, ns, space)
            setattr(space, short, fn)
            continue
        setattr(ops, op.name, fn)
        core[op.name] = fn
        args = op.arguments
        if args and args[0]["name"] == "self" and args[0]["kind"] == "Tensor":
            methods.append((op.name, fn))
    return ops, core, methods
