"""Outputs back as the caller's array type.

An op's outputs come out of the library as DLPackTensor objects; each is handed to the
`from_dlpack` of the framework the call's first array came from (torch, NumPy, CuPy, JAX), so a
torch caller gets torch tensors and a NumPy caller NumPy arrays, sharing memory with the library's
tensor. A call with no array argument gets NumPy arrays when NumPy is installed.

A call on CUDA arrays runs on their framework's current stream (Note [Python streams] in
python/src/streams.cpp): stream_for reads it, as a DLPack stream number.
"""
import importlib


def _torch_from_dlpack():
    torch = importlib.import_module("torch")
    from_capsule = getattr(torch._C, "_from_dlpack", None)
    if from_capsule is None:
        return torch.from_dlpack
    # The output was written on torch's current stream (stream_for), which is where torch reads
    # it: no ordering to ask for (-1), and torch.from_dlpack's Python handshake skipped.
    return lambda tensor: from_capsule(tensor.__dlpack__(stream=-1))


def _from_dlpack_of(module_name):
    if module_name == "torch":
        return _torch_from_dlpack()
    if module_name == "numpy":
        return importlib.import_module("numpy").from_dlpack
    if module_name == "cupy":
        return importlib.import_module("cupy").from_dlpack
    if module_name in ("jax", "jaxlib"):
        return importlib.import_module("jax.dlpack").from_dlpack
    return None


def _per_type(of_module):
    """of_module(framework name) -> value, cached per array type."""
    cache = {}

    def lookup(array):
        kind = type(array)
        if kind not in cache:
            cache[kind] = of_module(kind.__module__.split(".")[0])
        return cache[kind]

    return lookup


_converter_of = _per_type(_from_dlpack_of)  # array -> its framework's from_dlpack, or None


def converter_for(arrays):
    """The function turning a DLPackTensor into the type of the first array in `arrays`."""
    for array in arrays:
        if array is not None and (convert := _converter_of(array)) is not None:
            return convert
    try:
        return importlib.import_module("numpy").from_dlpack
    except ImportError:
        return lambda tensor: tensor


def _torch_stream(array):
    if not array.is_cuda:
        return None
    torch = importlib.import_module("torch")
    # The raw handle without building a torch.cuda.Stream object. torch names the legacy default
    # stream 0, which DLPack forbids for CUDA: its DLPack number is 1.
    return torch._C._cuda_getCurrentRawStream(array.device.index) or 1


def _cupy_stream(array):
    cupy = importlib.import_module("cupy")
    with cupy.cuda.Device(array.device.id):
        return cupy.cuda.get_current_stream().ptr


def _stream_reader_of(module_name):
    if module_name == "torch":
        return _torch_stream
    if module_name == "cupy":
        return _cupy_stream
    return None  # CPU frameworks; JAX orders its own work in __dlpack__


_stream_reader_for = _per_type(_stream_reader_of)  # array -> current-stream reader, or None


def stream_for(arrays):
    """The DLPack number of the current stream of the first CUDA array's framework, or None."""
    for array in arrays:
        if array is not None and (read := _stream_reader_for(array)) is not None:
            stream = read(array)
            if stream is not None:
                return stream
    return None
