# Helpers that keep each module's CMakeLists.txt to a few lines.

# vigil_library(NAME SOURCES a.cc b.cc DEPS vigil_core ...)
function(vigil_library name)
  cmake_parse_arguments(A "" "" "SOURCES;DEPS" ${ARGN})
  add_library(${name} STATIC ${A_SOURCES})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(${name} PUBLIC ${A_DEPS})
endfunction()

# vigil_test(NAME SOURCES foo_test.cc DEPS vigil_x [LABELS unit|integration] [TIMEOUT s])
# One CTest test per binary. Tests find helper binaries and data through
# environment variables set here, never through hard-coded build paths.
function(vigil_test name)
  cmake_parse_arguments(A "" "TIMEOUT" "SOURCES;DEPS;LABELS" ${ARGN})
  add_executable(${name} ${A_SOURCES})
  target_link_libraries(${name} PRIVATE ${A_DEPS} GTest::gtest GTest::gtest_main GTest::gmock)
  add_test(NAME ${name} COMMAND ${name})
  if(NOT A_LABELS)
    set(A_LABELS unit)
  endif()
  if(NOT A_TIMEOUT)
    set(A_TIMEOUT 120)
  endif()
  set_tests_properties(${name} PROPERTIES LABELS "${A_LABELS}" TIMEOUT ${A_TIMEOUT}
    ENVIRONMENT "VIGIL_SOURCE_DIR=${PROJECT_SOURCE_DIR};VIGIL_BUILD_DIR=${PROJECT_BINARY_DIR}")
endfunction()
