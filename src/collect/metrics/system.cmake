# System metrics from /proc and /sys (node_exporter-compatible names).
if(NOT TARGET PkgConfig::RE2)
  pkg_check_modules(RE2 REQUIRED IMPORTED_TARGET GLOBAL re2)
endif()

vigil_library(vigil_collect_system
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/proc_parse.cc
    ${CMAKE_CURRENT_LIST_DIR}/system_sources.cc
    ${CMAKE_CURRENT_LIST_DIR}/system_filesystem.cc
    ${CMAKE_CURRENT_LIST_DIR}/system_collector.cc
  DEPS vigil_collect_metrics vigil_core vigil_wire PkgConfig::RE2)

vigil_test(collect_system_test
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/proc_parse_test.cc
    ${CMAKE_CURRENT_LIST_DIR}/system_collector_test.cc
  DEPS vigil_collect_system)
