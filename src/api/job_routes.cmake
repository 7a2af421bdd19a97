# The jobs API (included by CMakeLists.txt in this folder).
if(TARGET vigil_jobs AND TARGET vigil_query_routes AND TARGET vigil_ingest)
  vigil_library(vigil_job_routes SOURCES ${CMAKE_CURRENT_LIST_DIR}/job_routes.cc
    ${CMAKE_CURRENT_LIST_DIR}/gpu_evidence.cc
    DEPS vigil_query_routes vigil_jobs vigil_ingest vigil_logstore vigil_tsdb)
  vigil_test(job_routes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/job_routes_test.cc
    DEPS vigil_job_routes)
endif()
