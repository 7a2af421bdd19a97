# GPU metrics through NVML loaded at run time (no link against the driver).
vigil_library(vigil_collect_gpu
  SOURCES nvml_loader.cc gpu_sampler.cc gpu_collector.cc
  DEPS vigil_collect_metrics vigil_core vigil_wire ${CMAKE_DL_LIBS})

# Tests load tests/fake_nvml (built in tests/, after this file is read; target
# references resolve at generate time) through the same dlopen path.
vigil_test(gpu_collector_test
  SOURCES gpu_collector_test.cc nvml_loader_test.cc
  DEPS vigil_collect_gpu ${CMAKE_DL_LIBS})
add_dependencies(gpu_collector_test fake_nvml)
target_compile_definitions(gpu_collector_test PRIVATE
  VIGIL_FAKE_NVML_PATH="$<TARGET_FILE:fake_nvml>"
  VIGIL_FAKE_NVML_SCENARIOS="${PROJECT_SOURCE_DIR}/tests/fake_nvml/scenarios")

# Prints every value the GPU collector emits, in Prometheus text; used by
# tests/gpu/check_real_nvml.sh on a machine with a real driver.
add_executable(nvml_dump nvml_dump.cc)
target_link_libraries(nvml_dump PRIVATE vigil_collect_gpu)
