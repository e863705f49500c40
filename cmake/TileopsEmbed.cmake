# Embeds the manifest's family files into the library as string literals, so the library needs no
# file at run time. The generated source defines tileops::detail::embedded_manifest_files().
function(tileops_embed_manifest out_var)
  set(files ${ARGN})
  set(out "${CMAKE_CURRENT_BINARY_DIR}/embedded_manifest.cpp")
  add_custom_command(
    OUTPUT "${out}"
    COMMAND ${CMAKE_COMMAND} -DOUT=${out} "-DFILES=${files}" -P "${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake"
    DEPENDS ${files} "${PROJECT_SOURCE_DIR}/cmake/EmbedFiles.cmake"
    COMMENT "Embedding the manifest"
    VERBATIM)
  set(${out_var} "${out}" PARENT_SCOPE)
endfunction()
