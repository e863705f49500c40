# Note [Shared libraries keep archives' symbols]
# A shared library of the project exports its own code only: whatever it takes from a static
# archive stays local to it (--exclude-libs). The GPU machine's GCC links the C++ runtime
# statically (libstdc++.a of its own installation), so each of our shared libraries held a copy and
# exported it. The torch operator kernel (libtileops_torch, opened by torch.ops.load_library with
# RTLD_LOCAL, so the system libstdc++ is not in the global scope) then found std::locale's
# destructor in libtileops_core first among its dependencies, and the first error torch formatted
# with a std::ostringstream freed, through that copy, memory the system libstdc++ had allocated:
# "free(): invalid pointer", an abort (bench/results/2026-12-02-h200-torch-kernel-abort.md).
function(tileops_keep_archives_local target)
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "SHARED_LIBRARY" OR type STREQUAL "MODULE_LIBRARY")
    target_link_options(${target} PRIVATE "LINKER:--exclude-libs,ALL")
  endif()
endfunction()
