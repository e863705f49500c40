"""One Python class per registered op class, derived from its manifest entry.

The constructor takes the entry's params (keywords as the manifest names them, its defaults, its
keyword-only params after `*`); calling an instance takes the inputs in signature order (optional
ones default to None) and `out=` when the entry declares a buffer output. Both signatures are
real `inspect.Signature`s, so help() and editors show them, and a wrong argument is the TypeError
Python gives for any function.
"""
import inspect
import keyword
import sys

from . import _C
from ._arrays import converter_for, stream_for
from ._errors import DLPackError

# tileops._torch once torch is imported and an op has been made (Note: the compile boundary).
_torch = None


def _not_compiling():
    return False


# Whether torch.compile's tracer (dynamo) is evaluating the caller: torch.compiler.
# is_dynamo_compiling once the compile boundary is loaded, a function returning False before. In
# eager code that function is a bare `return False`, the cheapest call torch offers, and dynamo folds
# it to True, so a traced call reaches the torch operator. Tracing that runs the Python code itself
# (torch.export's non-strict mode, AOT tracing) passes tensors the fast path declines, and the
# general path asks torch.compiler.is_compiling() (call_general). Held as a module global so that a
# call costs one function call, not a chain of them (docs/python.md, "Host time").
_is_dynamo_compiling = _not_compiling


def _with_torch():
    """The compile boundary module, loaded when the process has imported torch."""
    global _torch, _is_dynamo_compiling
    if _torch is None and "torch" in sys.modules:
        from . import _torch as module
        _torch = module
        _is_dynamo_compiling = module.torch.compiler.is_dynamo_compiling
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
    reference = f", as {entry['ref_api']}" if entry['ref_api'] else ""
    lines = [f"{entry['name']} ({entry['family']} family){reference}.", ""]
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


def _plain_names(names):
    """Whether every input name can be a parameter of a generated function."""
    return all(n.isidentifier() and not keyword.iskeyword(n) and n not in ("self", "out")
               for n in names)


def _make_call(input_names, required_count, has_out, traced_call, call_general):
    """The class's __call__, with the entry's own parameters.

    Calling an instance of a Python class costs CPython a tuple and a dict for the arguments
    (slot_tp_call); a `*args, **kwargs` function then copies both again. A function whose
    parameters are the inputs' names takes them straight from that tuple and dict, and the usual
    call (torch tensors by position or by name) crosses into C++ once, in `_call_torch` (Note [The
    torch fast path] in python/src/ops.cpp). Python's own TypeError reports a missing, extra or
    unknown argument, as Signature.bind did. Input names that cannot be parameters keep a `*args`
    signature. The function is compiled in this module's namespace, so that it reads
    `_is_dynamo_compiling` as it is when called; the class's own helpers are its closure.
    """
    if _plain_names(input_names):
        params = [n if i < required_count else f"{n}=None" for i, n in enumerate(input_names)]
        if has_out:
            params += ["*", "out=None"]
        signature = ", ".join(params)
        args = "(" + "".join(f"{n}, " for n in input_names) + ")"
        out, kwargs, fast_when = ("out" if has_out else "None"), "{}", None
    else:
        signature, args, out, kwargs = "*args, out=None, **kwargs", "args", "out", "kwargs"
        fast_when = "not kwargs"  # inputs by name go to the general path, which binds them
    fast = f"""result = self._call_torch({args}, {out})
        if result is not NotImplemented:
            return result"""
    if fast_when is not None:
        fast = f"if {fast_when}:\n            " + fast.replace("\n", "\n    ")
    # Under dynamo the first test folds to True and the call is the branch's torch operator
    # (tileops._torch), reached without inspect, which the tracer does not follow.
    source = f"""
def factory(traced_call, call_general):
    def __call__(self, {signature}):
        if _is_dynamo_compiling():
            return traced_call(self, {args}, {out}, {kwargs})
        {fast}
        return call_general(self, {args}, {out}, {kwargs})
    return __call__
"""
    namespace = {}
    exec(source, globals(), namespace)
    return namespace["factory"](traced_call, call_general)


def _param_value(value):
    """A dtype given as a framework's dtype object (torch.bfloat16, np.float16, np.dtype("f4"))
    becomes the library's name for it ("bfloat16"), as a dtype param is written in the manifest;
    any other value is passed on as it is."""
    kind = type(value)
    if kind.__module__ == "torch" and kind.__name__ == "dtype":
        return str(value).removeprefix("torch.")
    numpy = sys.modules.get("numpy")
    if numpy is not None and (isinstance(value, numpy.dtype) or (
            isinstance(value, type) and issubclass(value, numpy.generic))):
        return numpy.dtype(value).name
    return value


def _returned(convert, result, op_name, output_name):
    """An output as the caller's framework takes it (convert: its from_dlpack), or the library's
    DLPackError naming the output where the framework cannot hold it (NumPy a bfloat16 or a meta
    tensor); the call has completed (last_call is its record)."""
    if result is None:
        return None
    try:
        return convert(result)
    except (BufferError, RuntimeError, TypeError, ValueError) as e:
        framework = getattr(convert, "__module__", None) or "the caller's framework"
        raise DLPackError(f"{op_name}: output {output_name} ({result.dtype} "
                          f"{list(result.shape)}) cannot be returned as a {framework} array: "
                          f"{e}") from e


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
        given = {k: _param_value(v) for k, v in bound.arguments.items()
                 if k not in ("self", "target")}
        self._op = _C.Op(name, given, bound.arguments.get("target"))
        self._key = self._op.instance_key
        self._call_torch = self._op.call_torch
        torch_boundary = _with_torch()
        if torch_boundary is not None:
            torch_boundary.register(self)

    def call_general(self, args, out, kwargs):
        """Any call: other array types, inputs by keyword, an instance made before torch."""
        boundary = _torch if _torch is not None else _with_torch()
        if boundary is not None:
            if self._key not in boundary._instances:
                boundary.register(self)  # made before torch was imported: reachable from now on
            if boundary.torch.compiler.is_compiling():
                # Traced by running Python (torch.export's non-strict mode, AOT tracing): fake
                # tensors, which the fast path declined, go through the branch's torch operator.
                return _traced_call(self, args, out, kwargs)
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
            converted.append(out if (out is not None and i == buffer_index)
                             else _returned(convert, r, name, outputs[i]["name"]))
        if not converted:
            return None
        return converted[0] if len(converted) == 1 else tuple(converted)

    def _traced_call(self, args, out, kwargs):
        arrays = list(args) + [kwargs.get(n) for n in input_names[len(args):]]
        return _torch.call(self, arrays, out, buffer_index)

    __call__ = _make_call(input_names, required_count, buffer_index is not None, _traced_call,
                          call_general)
    __call__.__qualname__ = f"{name}.__call__"  # what Python's argument errors name
    __init__.__signature__ = init_sig
    __call__.__signature__ = call_sig
    return type(name, (OpBase,), {
        "__init__": __init__, "__call__": __call__, "__doc__": _docstring(entry),
        "__module__": "tileops", "__slots__": (), "entry": entry})
