# tileops_generate_op_classes(SOURCES_VAR INCLUDE_VAR manifest files...): runs tileops_opgen over
# the family files. The generated headers land in <build>/generated/include (public, installed);
# the sources in <build>/generated/src, compiled into the library. Outputs are rewritten only when
# their text changes, so editing one family recompiles that family.
function(tileops_generate_op_classes sources_var include_var)
  set(include_dir "${PROJECT_BINARY_DIR}/generated/include")
  set(source_dir "${PROJECT_BINARY_DIR}/generated/src")
  set(outputs "${include_dir}/tileops/ops.hpp" "${source_dir}/ops/registration.cpp")
  set(sources "${source_dir}/ops/registration.cpp")
  foreach(f IN LISTS ARGN)
    get_filename_component(family "${f}" NAME_WE)
    list(APPEND outputs "${include_dir}/tileops/ops/${family}.hpp" "${source_dir}/ops/${family}_ops.cpp")
    list(APPEND sources "${source_dir}/ops/${family}_ops.cpp")
  endforeach()
  add_custom_command(
    OUTPUT ${outputs}
    COMMAND tileops_opgen --include-dir "${include_dir}" --source-dir "${source_dir}" ${ARGN}
    DEPENDS tileops_opgen ${ARGN}
    COMMENT "Generating the op classes from the manifest"
    VERBATIM)
  set(${sources_var} ${sources} PARENT_SCOPE)
  set(${include_var} "${include_dir}" PARENT_SCOPE)
endfunction()
