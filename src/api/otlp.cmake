# The OTLP/HTTP metrics receiver (POST /v1/metrics, docs/otlp.md); the decoder
# is ingest's (ingest/otlp.h).
if(TARGET vigil_net AND TARGET vigil_ingest)
  find_package(ZLIB REQUIRED)
  find_package(nlohmann_json 3 REQUIRED)
  vigil_library(vigil_otlp_routes SOURCES ${CMAKE_CURRENT_LIST_DIR}/otlp_routes.cc
    DEPS vigil_ingest vigil_net)
  vigil_test(otlp_routes_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/otlp_routes_test.cc
    DEPS vigil_otlp_routes ZLIB::ZLIB nlohmann_json::nlohmann_json)
  # The seed files under fuzz/corpus/otlp_fuzz are decoded as a test too.
  set_property(TEST otlp_routes_test APPEND PROPERTY ENVIRONMENT "VIGIL_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endif()
