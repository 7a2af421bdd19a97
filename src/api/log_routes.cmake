# The log API (included by CMakeLists.txt in this folder).
if(TARGET vigil_query_routes AND TARGET vigil_logql)
  vigil_library(vigil_log_routes SOURCES ${CMAKE_CURRENT_LIST_DIR}/log_routes.cc
    DEPS vigil_query_routes vigil_logql vigil_logstore)
  vigil_test(log_routes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/log_routes_test.cc
    DEPS vigil_log_routes)
endif()
