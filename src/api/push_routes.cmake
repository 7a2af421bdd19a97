# Pushgateway-compatible push of metrics (included by CMakeLists.txt in this folder).
if(TARGET vigil_query_routes)
  vigil_library(vigil_push_routes SOURCES ${CMAKE_CURRENT_LIST_DIR}/push_routes.cc
    DEPS vigil_query_routes vigil_ingest vigil_ingest_decode vigil_net vigil_core)
  vigil_test(push_routes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/push_routes_test.cc
    DEPS vigil_push_routes)
endif()
