# Warnings every target of the project is built with; -Werror when TILEOPS_WERROR (CI sets it).
function(tileops_set_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wnon-virtual-dtor>
    # clang (the fuzzer build) does not know GCC's -Wshadow=local.
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wshadow=local>
    # g++ 12 at -O3 reports std::string concatenation inside libstdc++ as overlapping memcpy
    # (GCC bug 105329); the warning is wrong there and says nothing about our code.
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>>:-Wno-restrict>
    # g++ 13 (the GPU machine's compiler) at -O3 flags builder chains that take temporary strings
    # as dangling references (GCC bug 107532) and std::optional<Target>'s string as maybe
    # uninitialised once inlined into make_shared; both stay visible but do not fail the build.
    $<$<AND:$<COMPILE_LANGUAGE:CXX>,$<CXX_COMPILER_ID:GNU>,$<VERSION_GREATER_EQUAL:$<CXX_COMPILER_VERSION>,13>>:-Wno-error=dangling-reference;-Wno-error=maybe-uninitialized>)
  if(TILEOPS_WERROR)
    target_compile_options(${target} PRIVATE $<$<COMPILE_LANGUAGE:CXX>:-Werror>)
  endif()
endfunction()
