"""The compile boundary: each op call is one node of a torch.compile graph.

Every effect branch of an op class (which optional inputs are present, whether `out=` is passed:
the manifest's EffectBranch, whose operator_name is "tileops::<family>_<op>[_writes_x][_out]
[_without_y]") is a torch custom operator, registered when the first instance of the class is made
with torch imported. Its schema takes the instance's key (a string: the op instance is found by
it, as the seeds' compile boundary says) and the present inputs, written ones annotated as
mutated, and `out` when passed; it returns the emitted outputs. Its real kernel runs the op
instance's call; its fake kernel asks the C++ signature check alone for the output shapes
(Op::check_call), which keeps no record, so the fake calls torch makes while tracing leave
`last_call` as the last real call's.

The real kernel can be C++ (Note [The C++ operator kernel] in python/torch_kernel/call_kernel.cpp,
libtileops_torch in the package, built when torch was present at build time): it finds the
instance in the library's registry, owned for the call, and runs it without a Python frame or a
DLPack round trip. It is the default whenever the package has it; TILEOPS_TORCH_CPP_KERNEL=0
(before the first op class registers its operators) chooses the Python kernel below instead, and
TILEOPS_TORCH_CPP_KERNEL=1 requires the C++ one.

Calls go through the operators only while torch compiles (under dynamo, and while torch.export's
non-strict mode or AOT tracing runs the Python with fake tensors: tileops/_classes.py): eager calls
keep the direct path, which does not pay the dispatcher.
"""
import ctypes
import os
import threading
import weakref

import torch

from . import _C
from ._errors import CheckError
from ._arrays import _torch_from_dlpack, stream_for

# torch tensors cross through torch's C functions (Note [Python streams]; Note [The torch fast
# path] in python/src/ops.cpp).
if hasattr(torch._C, "_to_dlpack") and hasattr(torch._C, "_from_dlpack"):
    _C._set_torch_export(torch.Tensor, torch._C._to_dlpack, torch._C._from_dlpack,
                         getattr(torch._C, "_cuda_getCurrentRawStream", None))
_from_dlpack = _torch_from_dlpack()

def _load_cpp_kernel():
    choice = os.environ.get("TILEOPS_TORCH_CPP_KERNEL")
    if choice == "0":
        return None
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libtileops_torch.so")
    if not os.path.exists(path):
        if choice == "1":
            raise ImportError(f"TILEOPS_TORCH_CPP_KERNEL=1 but {path} was not built (the package "
                              "was built without torch)")
        return None
    torch.ops.load_library(path)
    # The fast path's bridge (Note [The torch bridge] in python/torch_kernel/python_bridge.cpp):
    # dlopen of the library just loaded returns the same handle.
    library = ctypes.CDLL(path)
    _C._set_torch_bridge(*(ctypes.cast(getattr(library, name), ctypes.c_void_p).value
                           for name in ("tileops_torch_unpack", "tileops_torch_wrap",
                                        "tileops_torch_current_stream",
                                        "tileops_torch_bump_version")))
    return library


def _install_torch_allocator(library):
    """The library's CUDA memory comes from torch's caching allocator once torch is in the process
    (Note [Python streams] in python/src/streams.cpp): outputs and temporaries are torch's blocks,
    on the call's stream, inside a CUDA graph capture the capture's pool. Returns "c++" when
    libtileops_torch calls the allocator (Note [torch's caching allocator from C++] in
    python/torch_kernel/cuda/caching_allocator.cpp), "python" for the pair of Python functions
    (about a microsecond more per allocation), None without CUDA."""
    if not (_C.built_with_cuda and torch.cuda.is_available()):
        return None
    install = getattr(library, "tileops_torch_install_cuda_allocator", None)
    if install is not None and install() == 1:
        return "c++"
    raw_alloc = getattr(torch._C, "_cuda_cudaCachingAllocator_raw_alloc", None)
    raw_delete = getattr(torch._C, "_cuda_cudaCachingAllocator_raw_delete", None)
    if raw_alloc is None or raw_delete is None:  # the public functions, a few microseconds slower
        _C.set_cuda_allocator(torch.cuda.caching_allocator_alloc,
                              torch.cuda.caching_allocator_delete)
        return "python"
    current_device = torch._C._cuda_getDevice

    def alloc(nbytes, device, stream):
        # The library makes the call's device current; the public function's device switch is
        # for the other case.
        if current_device() == device:
            return raw_alloc(nbytes, stream)
        return torch.cuda.caching_allocator_alloc(nbytes, device, stream)

    _C.set_cuda_allocator(alloc, raw_delete)
    return "python"


_cpp_library = _load_cpp_kernel()
cpp_kernel = _cpp_library is not None  # the operators' real kernel is C++
cuda_allocator = _install_torch_allocator(_cpp_library)  # "c++", "python" or None
_instances = weakref.WeakValueDictionary()  # instance key -> op object
_registered = {}  # op class name -> {(present, has_out): (operator, branch)}
_registering = threading.Lock()  # held while a class's operators are defined (register)
_library = torch.library.Library("tileops", "FRAGMENT")


def _dtype(name):
    return getattr(torch, name)


def _dtype_name(dtype):
    return str(dtype).split(".", 1)[1]


def _instance(key):
    """The op object of `key`; the kernels run outside the tracer, where the lookup may fail."""
    instance = _instances.get(key)
    if instance is None:
        raise RuntimeError(
            f"{key} was made before torch was imported, so torch.compile cannot reach it: make "
            "the op after `import torch`, or call it once outside torch.compile")
    return instance


def _returns(tensors):
    """What an operator returning len(tensors) Tensors returns: None, the tensor, or a tuple."""
    if not tensors:
        return None
    return tensors[0] if len(tensors) == 1 else tuple(tensors)


def _returned(entry, branch):
    """Indices of the outputs the branch's operator returns: not an out buffer that was passed, not
    an output that is a written input (torch operators return neither: they are the caller's)."""
    written = set(branch["written"])
    return [i for i, o in enumerate(entry["outputs"])
            if not (branch["has_out"] and o["buffer_out"]) and o["alias"] not in written]


def _key_parameter(entry):
    """The schema's name for the instance key: "instance", unless an input has that name. The
    names must differ: torch's functionalization (aot_eager, inductor) passes arguments by name, and
    RopeFwdOp's `key` input once shared the name with the key's parameter."""
    names = {decl["name"] for decl in entry["inputs"]} | {"out"}
    name = "instance"
    while name in names:
        name = "_" + name
    return name


def _schema(entry, branch, returned):
    args = [f"str {_key_parameter(entry)}"]
    aliases = iter("abcdefghijklmnopqrstuvwxy")
    for decl in entry["inputs"]:
        mutated = f"({next(aliases)}!)" if decl["name"] in branch["written"] else ""
        optional = "?" if decl["optional"] else ""
        args.append(f"Tensor{mutated}{optional} {decl['name']}")
    if branch["has_out"]:
        args.append("Tensor(z!) out")
    return f"({', '.join(args)}) -> ({', '.join('Tensor' for _ in returned)})"


def _define(entry, op, branch):
    """Defines the branch's operator; returns its overload and the outputs it returns."""
    name = branch["operator_name"].split("::", 1)[1]
    returned = _returned(entry, branch)
    _library.define(name + _schema(entry, branch, returned))
    n_inputs = len(entry["inputs"])

    def split(tensors):
        return list(tensors[:n_inputs]), (tensors[n_inputs] if branch["has_out"] else None)

    def real(key, *tensors):
        inputs, out = split(tensors)
        results = _instance(key)._op.call(inputs, out, stream_for(list(tensors)))
        return _returns([_from_dlpack(results[i]) for i in returned])

    def fake(key, *tensors):
        inputs, out = split(tensors)
        specs = [None if t is None else (tuple(t.shape), _dtype_name(t.dtype)) for t in inputs]
        out_spec = None if out is None else (tuple(out.shape), _dtype_name(out.dtype))
        shapes = _instance(key)._op.infer(specs, out_spec)
        # The tensors' device; an op of no tensor argument (ALiBi) makes its outputs on the device
        # its `device` param names.
        device = next((t.device for t in tensors if t is not None), None)
        if device is None:
            device = torch.device(_instance(key).params.get("device") or "cpu")
        return _returns([torch.empty(shapes[i][0], dtype=_dtype(shapes[i][1]), device=device)
                         for i in returned])

    if cpp_kernel:
        torch.ops.tileops_torch.register_call_kernel(name, returned, n_inputs, branch["has_out"])
    else:
        _library.impl(name, real, "CompositeExplicitAutograd")
    torch.library.register_fake(branch["operator_name"], fake, lib=_library)
    overload = getattr(torch.ops.tileops, name).default
    input_names = [t["name"] for t in entry["inputs"]] + (["out"] if branch["has_out"] else [])

    def autograd(key, *tensors):
        # The ops have no backward: an input that requires grad is refused, as the eager call
        # refuses it, rather than traced into a graph whose gradient is silently None.
        if torch.is_grad_enabled():
            for tensor_name, t in zip(input_names, tensors):
                if t is not None and t.requires_grad:
                    raise CheckError(f"{entry['name']}: {tensor_name} requires grad, and tileops "
                                     f"ops have no backward (detach it, or call under "
                                     f"torch.no_grad())")
        with torch._C._AutoDispatchBelowAutograd():
            return overload(key, *tensors)

    _library.impl(name, autograd, "Autograd")
    return overload, returned


def register(instance):
    """Makes `instance` reachable from the operators and its class's operators exist."""
    cls = type(instance)
    _instances[instance._key] = instance
    instance._op._mark_torch_reachable()
    if cls.__name__ in _registered:
        return
    # The first instances of a class made on several threads at once define its operators once.
    with _registering:
        if cls.__name__ not in _registered:
            _register_class(cls, instance)


def _register_class(cls, instance):
    """Defines the torch operators of `cls`'s effect branches (register holds _registering)."""
    entry = cls.entry
    optional = [i for i, d in enumerate(entry["inputs"]) if d["optional"]]
    has_buffer = any(o["buffer_out"] for o in entry["outputs"])
    defined = {}  # operator name -> (overload, returned)
    branches = {}
    for mask in range(1 << len(optional)):
        present = [True] * len(entry["inputs"])
        for bit, i in enumerate(optional):
            present[i] = bool(mask >> bit & 1)
        for has_out in ((False, True) if has_buffer else (False,)):
            branch = instance._op.effect_branch(present, has_out)
            if branch["operator_name"] not in defined:
                defined[branch["operator_name"]] = _define(entry, instance._op, branch)
            branches[(tuple(present), has_out)] = defined[branch["operator_name"]]
    _registered[cls.__name__] = branches


def call(instance, arrays, out, buffer_index):
    """The call of `instance` as its branch's torch operator (under torch.compile)."""
    present = tuple(a is not None for a in arrays)
    branches = _registered.get(type(instance).__name__)
    if branches is None:
        raise RuntimeError(
            f"{instance._key} was made before torch was imported, so its operators do not exist: "
            "make the op after `import torch`, or call it once outside torch.compile")
    operator, returned = branches[(present, out is not None)]
    args = list(arrays)
    if out is not None:
        args.append(out)
    results = operator(instance._key, *args)
    if results is None:
        outputs = []
    elif isinstance(results, (tuple, list)):
        outputs = list(results)
    else:
        outputs = [results]
    if out is not None and buffer_index is not None:
        outputs.insert(buffer_index, out)
    if not outputs:
        return None
    return outputs[0] if len(outputs) == 1 else tuple(outputs)
