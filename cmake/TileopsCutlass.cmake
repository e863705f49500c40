# CUTLASS and CuTe, header-only, for the CUDA build's own sm_90a GEMM kernels (docs/gemm.md,
# "CUTLASS"): version 4.2, from the nvidia-cutlass wheel's headers that scripts/fetch-cutlass puts in
# build/cutlass/include. A CUDA build without them stops here with what to run: the kernels that
# use them are part of the CUDA build, not an option of it.
set(TILEOPS_CUTLASS_INCLUDE_DIR "${PROJECT_SOURCE_DIR}/build/cutlass/include" CACHE PATH
  "The folder holding cutlass/ and cute/ (CUTLASS 4.2)")
if(NOT EXISTS "${TILEOPS_CUTLASS_INCLUDE_DIR}/cutlass/version.h"
   OR NOT EXISTS "${TILEOPS_CUTLASS_INCLUDE_DIR}/cute/tensor.hpp")
  message(FATAL_ERROR "CUTLASS's headers were not found in ${TILEOPS_CUTLASS_INCLUDE_DIR}: run "
    "scripts/fetch-cutlass, or set TILEOPS_CUTLASS_INCLUDE_DIR to the folder holding cutlass/ and cute/.")
endif()
file(STRINGS "${TILEOPS_CUTLASS_INCLUDE_DIR}/cutlass/version.h" _tileops_cutlass_major
  REGEX "^#define CUTLASS_MAJOR [0-9]+")
string(REGEX REPLACE ".* ([0-9]+)$" "\\1" _tileops_cutlass_major "${_tileops_cutlass_major}")
if(_tileops_cutlass_major LESS 4)
  message(FATAL_ERROR "CUTLASS ${_tileops_cutlass_major}.x in ${TILEOPS_CUTLASS_INCLUDE_DIR}; the "
    "kernels need 4.2 (scripts/fetch-cutlass)")
endif()
