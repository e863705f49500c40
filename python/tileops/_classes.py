"""One Python class per registered op class, derived from its manifest entry.

The constructor takes the entry's params (keywords as the manifest names them, its defaults, its
keyword-only params after `*`); calling an instance takes the inputs in signature order (optional
ones default to None) and `out=` when the entry declares a buffer output. Both signatures are
real `inspect.Signature`s, so help() and editors show them, and a wrong argument is the TypeError
Python gives for any function.
"""
import inspect
import sys

from . import _C
from ._arrays import converter_for, stream_for

# tileops._torch once torch is imported and an op has been made (Note: the compile boundary).
_torch = None


def _not_compiling():
    return False


# Whether torch.compile is tracing the caller: torch.compiler.is_compiling itself once the compile
# boundary is loaded (the tracer folds that function to True), a function returning False before.
# Held as a module global so that a call costs one function call, not a chain of them (the eager
# call's Python part: docs/python.md, "Host time").
_is_compiling = _not_compiling


def _with_torch():
    """The compile boundary module, loaded when the process has imported torch."""
    global _torch, _is_compiling
    if _torch is None and "torch" in sys.modules:
        from . import _torch as module
        _torch = module
        _is_compiling = module.torch.compiler.is_compiling
    return _torch

_P = inspect.Parameter


def _init_signature(entry):
    params = [_P("self", _P.POSITIONAL_OR_KEYWORD)]
    for p in entry["params"]:
        kind = _P.KEYWORD_ONLY if p["kw_only"] else _P.POSITIONAL_OR_KEYWORD
        default = _P.empty if p["required"] else p["default"]
        params.append(_P(p["name"], kind, default=default))
    # The target serving the instance (a registered target's name, "BUILTIN" for the in-tree
    # kernels; None: detection), as the C++ constructors take it.
    params.append(_P("target", _P.KEYWORD_ONLY, default=None))
    # Keyword-only params may precede positional ones in the manifest; inspect wants them last.
    params.sort(key=lambda q: q.kind == _P.KEYWORD_ONLY)
    return inspect.Signature(params)


def _call_signature(entry):
    params = [_P("self", _P.POSITIONAL_OR_KEYWORD)]
    for t in entry["inputs"]:
        params.append(_P(t["name"], _P.POSITIONAL_OR_KEYWORD,
                         default=None if t["optional"] else _P.empty))
    if any(o["buffer_out"] for o in entry["outputs"]):
        params.append(_P("out", _P.KEYWORD_ONLY, default=None))
    return inspect.Signature(params)


def _docstring(entry):
    lines = [f"{entry['name']} ({entry['family']} family), as {entry['ref_api']}.", ""]
    lines.append("Construction params:")
    for p in entry["params"]:
        default = "required" if p["required"] else f"default {p['default']!r}"
        lines.append(f"  {p['name']}: {p['type']} ({default})")
    lines.append("Inputs:")
    for t in entry["inputs"]:
        extra = ", optional" if t["optional"] else ""
        extra += ", written in place" if t["mutated"] else ""
        lines.append(f"  {t['name']}: dtype {t['dtype']}, shape {t['shape']}{extra}")
    lines.append("Outputs:")
    for o in entry["outputs"]:
        buffer = " (out= takes a buffer for it)" if o["buffer_out"] else ""
        lines.append(f"  {o['name']}: dtype {o['dtype']}, shape {o['shape']}{buffer}")
    if not entry["outputs"]:
        lines.append("  none: the call writes its inputs in place and returns None")
    return "\n".join(lines)


class OpBase:
    """What every generated op class shares: the C++ instance and its introspection."""

    # _call_torch: the C++ instance's call_torch, bound once (Note [The torch fast path]).
    __slots__ = ("_op", "_key", "_call_torch", "__weakref__")

    @property
    def last_call(self):
        """The record of the last completed call (a dict), as the C++ op keeps it."""
        return self._op.last_call()

    def eval_roofline(self):
        """FLOPs and bytes of the last call, from the manifest's roofline."""
        return self._op.eval_roofline()

    @property
    def serving_target(self):
        """The target serving this instance ("BUILTIN" for the in-tree kernels), or None."""
        return self._op.serving_target()

    def request_tune(self):
        self._op.request_tune()

    @property
    def held_delegates(self):
        return self._op.held_delegates()

    @property
    def params(self):
        """The construction params, checked, with the defaults filled in."""
        return self._op.params()

    def explain(self, *inputs, device="cpu"):
        """Why each implementation serves or refuses a call of these inputs on `device`, without
        running it (the inputs count as meta tensors of their geometry)."""
        arrays = list(inputs) + [None] * (len(self.entry["inputs"]) - len(inputs))
        return self._op.explain(arrays, device)

    def __repr__(self):
        return f"<tileops.{type(self).__name__} {self._op.instance_key}>"


def make_class(entry):
    init_sig = _init_signature(entry)
    call_sig = _call_signature(entry)
    name = entry["name"]
    input_names = [t["name"] for t in entry["inputs"]]
    n_inputs = len(input_names)
    # Inputs before the first optional one are required (optional inputs come last).
    required_count = sum(1 for t in entry["inputs"] if not t["optional"])
    outputs = entry["outputs"]
    buffer_index = next((i for i, o in enumerate(outputs) if o["buffer_out"]), None)

    def __init__(self, *args, **kwargs):
        bound = init_sig.bind(self, *args, **kwargs)
        given = {k: v for k, v in bound.arguments.items() if k not in ("self", "target")}
        self._op = _C.Op(name, given, bound.arguments.get("target"))
        self._key = self._op.instance_key
        self._call_torch = self._op.call_torch
        torch_boundary = _with_torch()
        if torch_boundary is not None:
            torch_boundary.register(self)

    def __call__(self, *args, out=None, **kwargs):
        if _is_compiling():
            # Traced by torch.compile: the call is the branch's torch operator (tileops._torch),
            # reached without inspect, which the tracer does not follow.
            arrays = list(args) + [kwargs.get(n) for n in input_names[len(args):]]
            return _torch.call(self, arrays, out, buffer_index)
        if not kwargs:
            # torch tensors by position: one crossing into C++ (Note [The torch fast path] in
            # python/src/ops.cpp); NotImplemented for anything the general path must serve.
            result = self._call_torch(args, out)
            if result is not NotImplemented:
                return result
        return call_general(self, args, out, kwargs)

    def call_general(self, args, out, kwargs):
        """Any call: other array types, inputs by keyword, an instance made before torch."""
        boundary = _torch if _torch is not None else _with_torch()
        if boundary is not None and self._key not in boundary._instances:
            boundary.register(self)  # made before torch was imported: reachable from now on
        if required_count <= len(args) <= n_inputs and not kwargs:
            # The usual call, inputs by position: no Signature.bind, which costs microseconds.
            arrays = list(args) + [None] * (n_inputs - len(args))
            if out is not None and buffer_index is None:
                call_sig.bind(self, *args, out=out)  # raises the TypeError for out=
        else:
            if out is not None:
                kwargs = dict(kwargs, out=out)
            bound = call_sig.bind(self, *args, **kwargs)
            arrays = [bound.arguments.get(n) for n in input_names]
            out = bound.arguments.get("out")
        results = self._op.call(arrays, out, stream_for(arrays + [out]))
        convert = converter_for(arrays + [out])
        converted = []
        for i, r in enumerate(results):
            # The out buffer comes back as the caller's own object, as torch's out= does.
            converted.append(out if (out is not None and i == buffer_index) else convert(r))
        if not converted:
            return None
        return converted[0] if len(converted) == 1 else tuple(converted)

    __init__.__signature__ = init_sig
    __call__.__signature__ = call_sig
    return type(name, (OpBase,), {
        "__init__": __init__, "__call__": __call__, "__doc__": _docstring(entry),
        "__module__": "tileops", "__slots__": (), "entry": entry})
