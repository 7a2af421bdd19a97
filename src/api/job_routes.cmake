# The jobs API (included by CMakeLists.txt in this folder): renders
# diagnose::JobReporter's reports.
if(TARGET vigil_diagnose AND TARGET vigil_query_routes)
  vigil_library(vigil_job_routes SOURCES ${CMAKE_CURRENT_LIST_DIR}/job_routes.cc
    DEPS vigil_diagnose vigil_query_routes vigil_net)
  vigil_test(job_routes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/job_routes_test.cc
    DEPS vigil_job_routes)
endif()
