"""Outputs back as the caller's array type.

An op's outputs come out of the library as DLPackTensor objects; each is handed to the
`from_dlpack` of the framework the call's first array came from (torch, NumPy, CuPy, JAX), so a
torch caller gets torch tensors and a NumPy caller NumPy arrays, sharing memory with the library's
tensor. A call with no array argument gets NumPy arrays when NumPy is installed.
"""
import importlib


def _from_dlpack_of(module_name):
    if module_name == "torch":
        return importlib.import_module("torch").from_dlpack
    if module_name == "numpy":
        return importlib.import_module("numpy").from_dlpack
    if module_name == "cupy":
        return importlib.import_module("cupy").from_dlpack
    if module_name in ("jax", "jaxlib"):
        return importlib.import_module("jax.dlpack").from_dlpack
    return None


_converters = {}  # array type -> its framework's from_dlpack, or None


def converter_for(arrays):
    """The function turning a DLPackTensor into the type of the first array in `arrays`."""
    for array in arrays:
        if array is None:
            continue
        kind = type(array)
        if kind not in _converters:
            _converters[kind] = _from_dlpack_of(kind.__module__.split(".")[0])
        convert = _converters[kind]
        if convert is not None:
            return convert
    try:
        return importlib.import_module("numpy").from_dlpack
    except ImportError:
        return lambda tensor: tensor
