// The library's error hierarchy. Every message starts with the op (or component) name and names
// the tensor, param or rule at fault: "<Op>: <what> ...".
#pragma once

#include <stdexcept>
#include <string>

namespace tileops {

// Base of every error the library raises on purpose.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A call, a parameter or a result violates the manifest signature (Python ValueError).
class CheckError : public Error {
 public:
  using Error::Error;
};

// An implementation table breaks its interface contract at construction (Python TypeError).
class ContractError : public Error {
 public:
  using Error::Error;
};

// A manifest file, entry or expression is malformed.
class ManifestError : public Error {
 public:
  using Error::Error;
};

// An expression failed while it was evaluated (overflow, division by zero, a primitive's domain).
class EvalError : public Error {
 public:
  using Error::Error;
};

// Backend registry and target selection failures.
class BackendError : public Error {
 public:
  using Error::Error;
};
class UnknownTargetError : public BackendError {
 public:
  using BackendError::BackendError;
};
class AmbiguousTargetError : public BackendError {
 public:
  using BackendError::BackendError;
};
// Nothing can run this op here (no in-tree kernel for the device, no builder for the target).
class OpNotAvailableError : public BackendError {
 public:
  using BackendError::BackendError;
};

// No implementation serves the call, or several do and none is preferred (Python ValueError).
class SelectionError : public Error {
 public:
  using Error::Error;
};

// An operation is not valid in the object's current state (Python RuntimeError).
class RuntimeStateError : public Error {
 public:
  using Error::Error;
};

// A tensor exchanged through DLPack is malformed or unsupported.
class DLPackError : public Error {
 public:
  using Error::Error;
};

// A tuning file (TILEOPS_TUNING_FILE, include/tileops/op/tuning.hpp) is malformed or cannot be
// read or written; the message names the file and, for a malformed one, the line.
class TuningFileError : public Error {
 public:
  using Error::Error;
};

// A CUDA runtime call failed.
class CudaError : public Error {
 public:
  using Error::Error;
};

}  // namespace tileops
