# The OTLP/HTTP metrics receiver (POST /v1/metrics, docs/otlp.md).
if(TARGET vigil_http AND TARGET vigil_tsdb)
  find_package(ZLIB REQUIRED)
  find_package(nlohmann_json 3 REQUIRED)
  # The decoder alone (pure; the fuzz target links it).
  vigil_library(vigil_otlp SOURCES ${CMAKE_CURRENT_LIST_DIR}/otlp.cc DEPS vigil_wire vigil_core)
  target_link_libraries(vigil_otlp PRIVATE ZLIB::ZLIB nlohmann_json::nlohmann_json)
  vigil_library(vigil_otlp_routes SOURCES ${CMAKE_CURRENT_LIST_DIR}/otlp_routes.cc
    DEPS vigil_otlp vigil_http vigil_tsdb)
  vigil_test(otlp_test SOURCES ${CMAKE_CURRENT_LIST_DIR}/otlp_test.cc
    DEPS vigil_otlp_routes ZLIB::ZLIB nlohmann_json::nlohmann_json)
endif()
if(TARGET otlp_test)
  # The seed files under fuzz/corpus/otlp_fuzz are decoded as a test too.
  set_property(TEST otlp_test APPEND PROPERTY ENVIRONMENT "VIGIL_SOURCE_DIR=${PROJECT_SOURCE_DIR}")
endif()
