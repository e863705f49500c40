# tileops_check_headers(): compiles every public header on its own (one translation unit each that
# includes only that header), so a header that leans on what its includer happened to include
# fails the build. The generated op-class headers are checked too. The ci preset turns it on.
function(tileops_check_headers)
  file(GLOB_RECURSE headers RELATIVE "${PROJECT_SOURCE_DIR}/include" CONFIGURE_DEPENDS
    "${PROJECT_SOURCE_DIR}/include/tileops/*.hpp")
  get_target_property(generated_sources tileops SOURCES)
  set(generated_headers tileops/ops.hpp)
  foreach(s IN LISTS generated_sources)
    if(s MATCHES "/generated/src/ops/([a-z_]+)_ops\\.cpp$")
      list(APPEND generated_headers "tileops/ops/${CMAKE_MATCH_1}.hpp")
    endif()
  endforeach()
  set(units)
  foreach(h IN LISTS headers generated_headers)
    string(MAKE_C_IDENTIFIER "${h}" id)
    set(unit "${CMAKE_CURRENT_BINARY_DIR}/header_check/${id}.cpp")
    file(CONFIGURE OUTPUT "${unit}" CONTENT "#include \"${h}\"  // alone: it must compile by itself\n")
    list(APPEND units "${unit}")
  endforeach()
  add_library(tileops_header_check OBJECT ${units})
  target_link_libraries(tileops_header_check PRIVATE tileops)
  tileops_set_warnings(tileops_header_check)
endfunction()
