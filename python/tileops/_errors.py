"""The library's typed errors as Python exceptions, each carrying the C++ message unchanged.

Each class derives from the builtin a Python caller would catch for that kind of mistake
(include/tileops/core/error.hpp says which): a bad call or param is a ValueError, a broken
implementation contract both a TypeError and a ValueError, an op with no implementation for the
device a NotImplementedError, a call the object's state does not allow a RuntimeError.
"""


class Error(Exception):
    """Every tileops error."""


class CheckError(Error, ValueError):
    """A call or construction that breaks the op's signature: dtype, shape, device, params."""


class ContractError(Error, TypeError, ValueError):
    """An implementation table or composite that breaks its interface contract."""


class ManifestError(Error, ValueError):
    """A malformed manifest entry."""


class EvalError(Error, ValueError):
    """An expression of the manifest that cannot be evaluated for this call."""


class BackendError(Error, RuntimeError):
    """A problem with a target (backend) or its kernels."""


class UnknownTargetError(BackendError, LookupError):
    """A target name no backend registered."""


class AmbiguousTargetError(BackendError):
    """More than one target could serve and none was chosen."""


class OpNotAvailableError(BackendError, NotImplementedError):
    """No implementation serves the call on its device."""


class SelectionError(Error, ValueError):
    """No implementation serves the call, or several do and none is preferred."""


class RuntimeStateError(Error, RuntimeError):
    """An operation the op's current state does not allow (last_call before any call)."""


class DLPackError(Error, BufferError):
    """An array the DLPack exchange cannot represent (a dtype, device or stride it lacks)."""


class CudaError(Error, RuntimeError):
    """A CUDA runtime failure, with its call site."""


CLASSES = {cls.__name__: cls for cls in (
    Error, CheckError, ContractError, ManifestError, EvalError, BackendError, UnknownTargetError,
    AmbiguousTargetError, OpNotAvailableError, SelectionError, RuntimeStateError, DLPackError,
    CudaError)}
