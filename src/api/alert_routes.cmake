# The alerts API (included by CMakeLists.txt in this folder): renders
# alert::AlertEngine's alerts and rules, manages its silences, and shows its
# delivery log.
if(TARGET vigil_alert AND TARGET vigil_query_routes)
  find_package(nlohmann_json 3 REQUIRED)
  vigil_library(vigil_alert_routes SOURCES ${CMAKE_CURRENT_LIST_DIR}/alert_routes.cc
    ${CMAKE_CURRENT_LIST_DIR}/delivery_routes.cc
    ${CMAKE_CURRENT_LIST_DIR}/inbox_routes.cc
    ${CMAKE_CURRENT_LIST_DIR}/action_routes.cc
    DEPS vigil_alert vigil_query_routes vigil_net)
  target_link_libraries(vigil_alert_routes PRIVATE nlohmann_json::nlohmann_json)
  vigil_test(alert_routes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/alert_routes_test.cc
    DEPS vigil_alert_routes vigil_tsdb)
endif()
