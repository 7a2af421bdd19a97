# The alerts API (included by CMakeLists.txt in this folder): renders
# alert::AlertEngine's alerts and rules.
if(TARGET vigil_alert AND TARGET vigil_query_routes)
  vigil_library(vigil_alert_routes SOURCES ${CMAKE_CURRENT_LIST_DIR}/alert_routes.cc
    DEPS vigil_alert vigil_query_routes vigil_net)
  vigil_test(alert_routes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/alert_routes_test.cc
    DEPS vigil_alert_routes vigil_tsdb)
endif()
