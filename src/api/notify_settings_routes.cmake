# The notification settings API (included by CMakeLists.txt in this folder):
# HTTP only; config.json's part is the composition's (cli/notify_settings.h).
if(TARGET vigil_query_routes)
  vigil_library(vigil_notify_settings_routes
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/notify_settings_routes.cc
    DEPS vigil_query_routes vigil_net vigil_core)
  vigil_test(notify_settings_routes_test
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/notify_settings_routes_test.cc
    DEPS vigil_notify_settings_routes)
endif()
