# Routes joining the server to the store and ingest.
if(TARGET vigil_net AND TARGET vigil_ingest)
  vigil_library(vigil_routes SOURCES ${CMAKE_CURRENT_LIST_DIR}/routes.cc
    DEPS vigil_net vigil_ingest vigil_tsdb vigil_logstore vigil_core)
  vigil_test(routes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/routes_test.cc DEPS vigil_routes)
endif()
