# `cmake --install` lays out the headers (the generated op classes among them), the libraries and a
# package config so that a consumer's find_package(tileops) works.
include(CMakePackageConfigHelpers)
install(TARGETS tileops tileops_core EXPORT tileopsTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY include/tileops DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY "${PROJECT_BINARY_DIR}/generated/include/tileops" DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(EXPORT tileopsTargets NAMESPACE tileops:: DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tileops)
configure_package_config_file(cmake/tileopsConfig.cmake.in
  "${CMAKE_CURRENT_BINARY_DIR}/tileopsConfig.cmake"
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tileops)
write_basic_package_version_file("${CMAKE_CURRENT_BINARY_DIR}/tileopsConfigVersion.cmake"
  COMPATIBILITY SameMinorVersion)
install(FILES "${CMAKE_CURRENT_BINARY_DIR}/tileopsConfig.cmake"
  "${CMAKE_CURRENT_BINARY_DIR}/tileopsConfigVersion.cmake"
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/tileops)
