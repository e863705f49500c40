# OpenBLAS, the CPU GEMM library (docs/gemm.md): FindBLAS for the library (BLAS::BLAS) and the
# directory of its own cblas.h. Debian installs that header under include/<arch>/openblas-pthread,
# beside the reference BLAS's cblas.h one level up, so the search keys on openblas_config.h, which
# only OpenBLAS ships: the declarations then match the library that is linked.
#
# TILEOPS_OPENBLAS_ROOT: a folder holding Debian's OpenBLAS packages unpacked with `dpkg-deb -x`
# (scripts/fetch-openblas-debs, scripts/gpu-check), for a machine that has no OpenBLAS installed
# and no network to install it. Unpacked, the packages lack the alternatives symlinks that dpkg
# would make, so the library is searched in the pthread variant's own folder.
set(TILEOPS_OPENBLAS_ROOT "" CACHE PATH "Root of Debian's OpenBLAS packages unpacked with dpkg-deb -x")
if(TILEOPS_OPENBLAS_ROOT)
  set(_tileops_openblas_arch "${CMAKE_LIBRARY_ARCHITECTURE}")
  list(APPEND CMAKE_LIBRARY_PATH
    "${TILEOPS_OPENBLAS_ROOT}/usr/lib/${_tileops_openblas_arch}/openblas-pthread")
  list(APPEND CMAKE_INCLUDE_PATH
    "${TILEOPS_OPENBLAS_ROOT}/usr/include/${_tileops_openblas_arch}/openblas-pthread")
endif()

set(BLA_VENDOR OpenBLAS)
find_package(BLAS REQUIRED)
find_path(TILEOPS_OPENBLAS_INCLUDE_DIR NAMES openblas_config.h
  PATH_SUFFIXES openblas-pthread openblas-openmp openblas-serial openblas
  DOC "The folder of OpenBLAS's cblas.h")
if(NOT TILEOPS_OPENBLAS_INCLUDE_DIR OR NOT EXISTS "${TILEOPS_OPENBLAS_INCLUDE_DIR}/cblas.h")
  message(FATAL_ERROR "OpenBLAS's cblas.h was not found (Debian: libopenblas-dev; scripts/setup "
    "installs it). Set TILEOPS_OPENBLAS_INCLUDE_DIR to its folder, or TILEOPS_OPENBLAS_ROOT to "
    "Debian's packages unpacked.")
endif()
