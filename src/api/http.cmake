# HTTP server, client and Prometheus text exposition (included by CMakeLists.txt).
# Beast is compiled only in http_server.cc and http_client.cc (compile time).
set(_http ${CMAKE_CURRENT_LIST_DIR})
vigil_library(vigil_http
  SOURCES ${_http}/http_message.cc ${_http}/http_server.cc ${_http}/http_client.cc
          ${_http}/exposition.cc
  DEPS vigil_core vigil_wire Boost::headers Threads::Threads)
target_compile_definitions(vigil_http PRIVATE BOOST_ASIO_NO_DEPRECATED)
# GCC 12 reports -Wmaybe-uninitialized inside Beast 1.74's parser (a
# boost::optional false positive, seen in sanitizer builds); only the two Beast
# translation units are exempt.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  set_source_files_properties(${_http}/http_server.cc ${_http}/http_client.cc
    PROPERTIES COMPILE_OPTIONS -Wno-maybe-uninitialized)
endif()

# The client's tests are in the same binary, so `make test-tsan` covers them.
vigil_test(http_server_test
  SOURCES ${_http}/http_server_test.cc ${_http}/http_message_test.cc ${_http}/http_client_test.cc
  DEPS vigil_http)
vigil_test(exposition_test SOURCES ${_http}/exposition_test.cc DEPS vigil_http)

# Checks rendered /metrics text with Prometheus' own linter (Debian `prometheus`).
find_program(VIGIL_PROMTOOL promtool)
vigil_test(exposition_promtool_test SOURCES ${_http}/exposition_promtool_test.cc DEPS vigil_http
  LABELS integration)
if(VIGIL_PROMTOOL)
  set_property(TEST exposition_promtool_test APPEND PROPERTY ENVIRONMENT
    "VIGIL_PROMTOOL=${VIGIL_PROMTOOL}")
endif()
