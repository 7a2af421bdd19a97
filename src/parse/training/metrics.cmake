# Training metrics read from log lines (docs/training-metrics.md).
# log_metrics.cc is the entry point; the other files are the families of
# forms it reads, behind log_metrics_internal.h.
vigil_library(vigil_training_metrics
  SOURCES
    ${CMAKE_CURRENT_LIST_DIR}/log_metrics.cc
    ${CMAKE_CURRENT_LIST_DIR}/log_metrics_names.cc
    ${CMAKE_CURRENT_LIST_DIR}/log_metrics_values.cc
    ${CMAKE_CURRENT_LIST_DIR}/log_metrics_pairs.cc
    ${CMAKE_CURRENT_LIST_DIR}/log_metrics_progress.cc
    ${CMAKE_CURRENT_LIST_DIR}/log_metrics_frameworks.cc
  DEPS vigil_core)

vigil_test(training_metrics_test
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/log_metrics_test.cc
  DEPS vigil_training_metrics)
