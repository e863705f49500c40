"""tileops: LLM operators for NVIDIA Hopper with a CPU reference for every op.

Every op class registered in the C++ library is a class of this module, derived from its manifest
entry (tileops.RMSNormFwdOp, tileops.AddFwdOp, ...). Arrays cross through DLPack without a copy,
from torch, NumPy, CuPy and JAX, and outputs come back as the caller's array type:

    import numpy as np, tileops
    op = tileops.RMSNormFwdOp([4096])
    y = op(np.ones((2, 4096), np.float32), np.ones(4096, np.float32))

Errors are the classes of tileops._errors (tileops.CheckError is a ValueError, ...).
"""
from . import _C
from ._errors import CLASSES as _ERROR_CLASSES
from ._errors import *  # noqa: F401,F403  (the error classes are part of the API)
from ._classes import OpBase, make_class

_C._set_error_classes(_ERROR_CLASSES)

DLPackTensor = _C.DLPackTensor
register_detector = _C.register_detector
register_kernel_builder = _C.register_kernel_builder
set_default_target = _C.set_default_target

op_classes = {}
for _entry in _C.entries():
    op_classes[_entry["name"]] = globals()[_entry["name"]] = make_class(_entry)
del _entry

__all__ = sorted(op_classes) + sorted(_ERROR_CLASSES) + [
    "OpBase", "DLPackTensor", "op_classes", "register_detector", "register_kernel_builder",
    "set_default_target"]
