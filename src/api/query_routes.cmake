# The Prometheus query API (included by CMakeLists.txt in this folder).
if(TARGET vigil_net AND TARGET vigil_query)
  vigil_library(vigil_query_routes
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/query_routes.cc ${CMAKE_CURRENT_LIST_DIR}/params.cc
    DEPS vigil_net vigil_query vigil_tsdb)
  vigil_test(query_routes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/query_routes_test.cc
    DEPS vigil_query_routes)
  # promtool query instant|range|series|labels against a live server.
  find_program(VIGIL_PROMTOOL promtool)
  vigil_test(query_routes_promtool_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/query_routes_promtool_test.cc
    DEPS vigil_query_routes LABELS integration)
  if(VIGIL_PROMTOOL)
    set_property(TEST query_routes_promtool_test APPEND PROPERTY ENVIRONMENT
      "VIGIL_PROMTOOL=${VIGIL_PROMTOOL}")
  endif()
endif()
